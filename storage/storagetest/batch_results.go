package storagetest

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// BatchResult is a delivery of a batch as stored.
type BatchResult struct {
	Seq               int64  `db:"seq"`
	Address           string `db:"address"`
	Status            string `db:"status"`
	Attempts          int    `db:"attempts"`
	ProviderMessageID string `db:"provider_message_id"`
	Error             string `db:"error"`
	Permanent         bool   `db:"permanent"`
}

// BatchResults reads the stored deliveries of the batch k, by seq.
func BatchResults(ctx context.Context, q sqlx.QueryerContext, k storage.BatchKey) ([]BatchResult, error) {
	return storage.SelectAll[BatchResult](ctx, q, "read batch results", `SELECT seq, address, status, attempts, provider_message_id, error, permanent
		FROM alert_deliveries WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq > $5 AND seq <= $6
		ORDER BY seq`, k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi)
}
