package storage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// RecordedEvent is an event of the outbox as stored: what the API emitted
// and whether the dispatcher has handed it to the subscriptions yet.
type RecordedEvent struct {
	Type       string          `db:"type"`
	Payload    json.RawMessage `db:"payload"`
	Dispatched bool            `db:"dispatched"`
}

// TenantEvents returns the tenant's events in the order they were emitted
// (then by type). The API shows events only through webhooks; tests read
// them here to check what was recorded.
func TenantEvents(ctx context.Context, q sqlx.QueryerContext, tenant string) ([]RecordedEvent, error) {
	var out []RecordedEvent
	if err := sqlx.SelectContext(ctx, q, &out, `
		SELECT type, payload, dispatched_at IS NOT NULL AS dispatched
		FROM events WHERE tenant_id = $1 ORDER BY created_at, type`, tenant); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}
