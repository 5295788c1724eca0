package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// PendingEvent is an event of the outbox not dispatched yet.
type PendingEvent struct {
	ID        string          `db:"id"`
	Tenant    string          `db:"tenant_id"`
	Type      string          `db:"type"`
	Payload   json.RawMessage `db:"payload"`
	CreatedAt time.Time       `db:"created_at"`
}

// EventOutbox hands the events outbox to its dispatcher.
type EventOutbox struct {
	DB *DB
}

// Dispatch claims up to limit undispatched events, oldest first, with FOR
// UPDATE SKIP LOCKED (so several dispatchers share the work), passes each
// with the ids of its tenant's active subscriptions to the event's type to
// deliver, and marks them dispatched, all in one transaction. When deliver
// fails no event is marked. It returns how many events it marked.
func (o *EventOutbox) Dispatch(ctx context.Context, limit int, deliver func(e PendingEvent, subscriptions []int64) error) (int, error) {
	var n int
	err := o.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		events, err := SelectAll[PendingEvent](ctx, tx, "claim events", `
			SELECT id, tenant_id, type, payload, created_at FROM events
			WHERE dispatched_at IS NULL ORDER BY created_at LIMIT $1
			FOR UPDATE SKIP LOCKED`, limit)
		if err != nil || len(events) == 0 {
			return err
		}
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
			subs, err := SelectAll[int64](ctx, tx, "match subscriptions", `
				SELECT id FROM hook_subscriptions
				WHERE tenant_id = $1 AND active AND $2 = ANY(event_types) ORDER BY id`, e.Tenant, e.Type)
			if err != nil {
				return err
			}
			if err := deliver(e, subs); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET dispatched_at = now() WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
			return fmt.Errorf("mark events dispatched: %w", err)
		}
		n = len(events)
		return nil
	})
	return n, err
}
