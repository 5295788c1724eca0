package storagetest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
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
	return storage.SelectAll[RecordedEvent](ctx, q, "read events", `
		SELECT type, payload, dispatched_at IS NOT NULL AS dispatched
		FROM events WHERE tenant_id = $1 ORDER BY created_at, type`, tenant)
}

// UndoDispatch marks the tenant's event as not dispatched again, as
// if the dispatcher had died after delivering it but before recording that.
// Only tests use it: no user action undoes a dispatch.
func UndoDispatch(ctx context.Context, q sqlx.ExecerContext, tenant, eventID string) error {
	res, err := q.ExecContext(ctx, `UPDATE events SET dispatched_at = NULL WHERE tenant_id = $1 AND id = $2`, tenant, eventID)
	if err != nil {
		return fmt.Errorf("undo dispatch: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return storage.ErrNotFound
	}
	return nil
}

// MakeEventsDue makes the tenant's undispatched events that wait after a
// failed start due now, as if their back-off had passed.
func MakeEventsDue(ctx context.Context, q sqlx.ExecerContext, tenant string) error {
	if _, err := q.ExecContext(ctx, `UPDATE events SET retry_at = now() WHERE tenant_id = $1 AND dispatched_at IS NULL AND retry_at IS NOT NULL`, tenant); err != nil {
		return fmt.Errorf("make events due: %w", err)
	}
	return nil
}
