package storagetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/results"
)

// deliveryColumns are the columns of alert_deliveries read into a
// results.Delivery, as the result pages read them.
const deliveryColumns = `channel, cycle, seq, address, status, attempts, provider_message_id, error, permanent,
	'' AS key, sent_at, delivered_at, updated_at`

// AlertDeliveries returns every delivery to a recipient of the tenant's
// alert, on all channels, by channel, recipient and cycle. The result
// pages show them a channel or a recipient at a time; tests read them
// whole to check that each recipient got one row per channel.
func AlertDeliveries(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64) ([]results.Delivery, error) {
	return storage.SelectAll[results.Delivery](ctx, q, "read deliveries", `SELECT `+deliveryColumns+` FROM alert_deliveries
		WHERE alert_id = $1 AND tenant_id = $2 ORDER BY channel, seq, cycle`, alertID, tenant)
}

// BatchResult is a delivery of a batch as stored, read as the result pages
// read a delivery.
type BatchResult = results.Delivery

// BatchResults reads the stored deliveries of the batch k, by seq.
func BatchResults(ctx context.Context, q sqlx.QueryerContext, k storage.BatchKey) ([]BatchResult, error) {
	return storage.SelectAll[BatchResult](ctx, q, "read batch results", `SELECT `+deliveryColumns+`
		FROM alert_deliveries WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq > $5 AND seq <= $6
		ORDER BY seq`, k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi)
}

// TakeAwayDeliveries renames alert_deliveries in a database of the test's
// own, so that every later write of a batch's results fails, as a database
// that fails right after a batch's send does.
func TakeAwayDeliveries(ctx context.Context, q sqlx.ExecerContext) error {
	if _, err := q.ExecContext(ctx, `ALTER TABLE alert_deliveries RENAME TO alert_deliveries_away`); err != nil {
		return fmt.Errorf("take away alert_deliveries: %w", err)
	}
	return nil
}
