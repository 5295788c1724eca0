package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// The types of events tocsin emits to hook subscriptions.
const (
	EventAlertCreated       = "alert.created"
	EventAlertQueued        = "alert.queued"
	EventAlertSent          = "alert.sent"
	EventAlertCompleted     = "alert.completed"
	EventAlertFailed        = "alert.failed"
	EventAlertCancelled     = "alert.cancelled"
	EventRecipientResponded = "alert.recipient.responded"
	EventVerificationDone   = "verification.completed"
	EventVerificationFailed = "verification.failed"
	EventFileUploaded       = "file.uploaded"
	EventFileDeleted        = "file.deleted"
	EventSubscriptionTest   = "subscription.test"
)

// Event is a change that hook subscriptions may receive. It is written in the
// same transaction as the change it describes (the outbox), and a dispatcher
// starts its deliveries afterwards, so a crash between the two loses nothing.
type Event struct {
	ID        string          `db:"id"`
	Tenant    string          `db:"tenant_id"`
	Type      string          `db:"type"`
	Payload   json.RawMessage `db:"payload"`
	CreatedAt time.Time       `db:"created_at"`
}

// EmitEvent records an event of type typ for tenant inside tx and returns its
// id. The event's turn is one more than the last turn of its tenant's
// events not dispatched yet (1 when there are none), so that the
// dispatcher lets tenants take turns (EventOutbox.Dispatch).
func EmitEvent(ctx context.Context, tx sqlx.ExtContext, tenant, typ string, payload any) (string, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("encode %s event: %w", typ, err)
	}
	id := "evt_" + uuid.NewString()
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO events (id, tenant_id, type, payload, turn)
		SELECT $1, $2, $3, $4, coalesce(max(turn), 0) + 1 FROM events WHERE tenant_id = $2 AND dispatched_at IS NULL`,
		id, tenant, typ, b); err != nil {
		return "", fmt.Errorf("insert %s event: %w", typ, err)
	}
	return id, nil
}

// EventOutbox hands the events outbox to its dispatcher.
type EventOutbox struct {
	DB *DB
}

// ClaimedEvent is an event the dispatcher claimed, with the ids of its
// tenant's active subscriptions to its type, in order: the deliveries to
// start.
type ClaimedEvent struct {
	Event
	Subscriptions []int64
}

// Dispatch claims up to limit undispatched events with FOR UPDATE SKIP
// LOCKED (so several dispatchers share the work), the tenants taking turns
// and each tenant's oldest first: every tenant's first event waiting, then
// every tenant's second, and so on, so that a tenant whose events fill the
// outbox does not hold another's behind all of them. It passes them, in
// that order and each with its subscriptions, to deliver, and marks them
// dispatched, all in one transaction. When deliver fails no event is
// marked. It returns how many events it marked.
func (o *EventOutbox) Dispatch(ctx context.Context, limit int, deliver func(events []ClaimedEvent) error) (int, error) {
	var n int
	err := o.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		events, err := SelectAll[ClaimedEvent](ctx, tx, "claim events", `
			SELECT id, tenant_id, type, payload, created_at FROM events
			WHERE dispatched_at IS NULL ORDER BY turn, created_at LIMIT $1
			FOR UPDATE SKIP LOCKED`, limit)
		if err != nil || len(events) == 0 {
			return err
		}
		ids := make([]string, len(events))
		for i, e := range events {
			ids[i] = e.ID
		}
		type match struct {
			Event        string `db:"event_id"`
			Subscription int64  `db:"subscription_id"`
		}
		matches, err := SelectAll[match](ctx, tx, "match subscriptions", `
			SELECT e.id AS event_id, s.id AS subscription_id FROM events e
			JOIN hook_subscriptions s ON s.tenant_id = e.tenant_id AND s.active AND e.type = ANY(s.event_types)
			WHERE e.id = ANY($1) ORDER BY s.id`, pq.Array(ids))
		if err != nil {
			return err
		}
		subs := map[string][]int64{}
		for _, m := range matches {
			subs[m.Event] = append(subs[m.Event], m.Subscription)
		}
		for i := range events {
			events[i].Subscriptions = subs[events[i].ID]
		}
		if err := deliver(events); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET dispatched_at = now() WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
			return fmt.Errorf("mark events dispatched: %w", err)
		}
		n = len(events)
		return nil
	})
	return n, err
}
