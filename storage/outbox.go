package storage

import (
	"context"
	"encoding/json"
	"errors"
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
	// Attempts counts the claims of the event before this one whose
	// starts failed.
	Attempts int
}

// Deliveries is what the event costs a claim: one start per subscription,
// and at least one (marking an event that nothing matches is work too).
func (e ClaimedEvent) Deliveries() int { return max(1, len(e.Subscriptions)) }

// EventClaim is what one EventOutbox.Dispatch did.
type EventClaim struct {
	// Claimed counts the events claimed; Deliveries what they cost
	// (ClaimedEvent.Deliveries summed).
	Claimed, Deliveries int
	// Dispatched counts the events marked dispatched; Deferred those whose
	// starts failed, which wait before they are claimed again.
	Dispatched, Deferred int
	// Full reports that the claim stopped at its budget: more events may
	// be due.
	Full bool
}

// ErrNotTried is what deliver answers for an event whose starts it did not
// try: the event stays as it was, undispatched and due.
var ErrNotTried = errors.New("not tried")

// claimStep is the most events one statement of a claim locks. A claim
// locks events a step at a time, until their deliveries reach its budget,
// so it holds at most claimStep-1 events it does not take (those after
// the one that did not fit), which other dispatchers skip meanwhile.
const claimStep = 16

// Dispatch claims due undispatched events with FOR UPDATE SKIP LOCKED (so
// several dispatchers share the work), the tenants taking turns and each
// tenant's oldest first: every tenant's first event waiting, then every
// tenant's second, and so on, so that a tenant whose events fill the
// outbox does not hold another's behind all of them. A claim is bounded by
// the deliveries its events ask for, not by their number: it takes events
// in that order while their deliveries (ClaimedEvent.Deliveries) stay
// within budget, and stops at the first that does not fit, except that
// it always takes one event, so a claim costs at most budget starts, or
// one event's, and tenants take turns at that grain even when one has
// many subscriptions.
//
// It passes the events, in that order and each with its subscriptions,
// to deliver, which answers an error for each (nil when all its
// deliveries were started; a nil slice when all were), and then, in the
// same transaction: marks dispatched the events whose deliveries were
// all started; leaves as they were those deliver answers ErrNotTried;
// and defers the others: each stays undispatched, with its attempts
// counted and its error kept, and is not claimed again for 1 s doubling
// with each attempt up to a minute. So a start that fails holds back only
// its own event, and an event whose starts keep failing (retried every
// minute, for ever, as start requests are) is passed over meanwhile by
// the claims of its tenant's later events and every other tenant's.
// Deferring leaves the event its turn, so when it is due again it goes
// first; deliveries are not ordered in any case.
func (o *EventOutbox) Dispatch(ctx context.Context, budget int, deliver func(events []ClaimedEvent) []error) (EventClaim, error) {
	var c EventClaim
	budget = max(budget, 1)
	err := o.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		c = EventClaim{}
		events, err := claimEvents(ctx, tx, budget, &c)
		if err != nil || len(events) == 0 {
			return err
		}
		errs := deliver(events)
		if errs != nil && len(errs) != len(events) {
			return fmt.Errorf("deliver answered %d outcomes for %d events", len(errs), len(events))
		}
		var done []string
		for i, e := range events {
			switch {
			case errs == nil || errs[i] == nil:
				done = append(done, e.ID)
			case errors.Is(errs[i], ErrNotTried):
			default:
				if _, err := tx.ExecContext(ctx, `
					UPDATE events SET attempts = attempts + 1, last_error = left($2, 2000),
						retry_at = now() + least(interval '1 minute', interval '1 second' * power(2, least(attempts, 6)))
					WHERE id = $1`, e.ID, errs[i].Error()); err != nil {
					return fmt.Errorf("defer event: %w", err)
				}
				c.Deferred++
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE events SET dispatched_at = now() WHERE id = ANY($1)`, pq.Array(done)); err != nil {
			return fmt.Errorf("mark events dispatched: %w", err)
		}
		c.Dispatched = len(done)
		return nil
	})
	if err != nil {
		return EventClaim{}, err
	}
	return c, nil
}

// claimEvents locks, in tx, the events of one claim of at most budget
// deliveries (see Dispatch), a step at a time, and counts them in c.
func claimEvents(ctx context.Context, tx *sqlx.Tx, budget int, c *EventClaim) ([]ClaimedEvent, error) {
	type row struct {
		Event
		Attempts      int           `db:"attempts"`
		Subscriptions pq.Int64Array `db:"subscriptions"`
	}
	var events []ClaimedEvent
	seen := []string{}
	for {
		step := min(budget-c.Deliveries, claimStep)
		rows, err := SelectAll[row](ctx, tx, "claim events", `
			SELECT e.id, e.tenant_id, e.type, e.payload, e.created_at, e.attempts,
				coalesce((SELECT array_agg(s.id ORDER BY s.id) FROM hook_subscriptions s
					WHERE s.tenant_id = e.tenant_id AND s.active AND e.type = ANY(s.event_types)), '{}') AS subscriptions
			FROM events e
			WHERE e.dispatched_at IS NULL AND (e.retry_at IS NULL OR e.retry_at <= now()) AND e.id <> ALL($2)
			ORDER BY e.turn, e.created_at LIMIT $1
			FOR UPDATE OF e SKIP LOCKED`, step, pq.Array(seen))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			seen = append(seen, r.ID)
			e := ClaimedEvent{Event: r.Event, Subscriptions: r.Subscriptions, Attempts: r.Attempts}
			if len(events) > 0 && c.Deliveries+e.Deliveries() > budget {
				c.Full = true
				return events, nil
			}
			events = append(events, e)
			c.Claimed++
			c.Deliveries += e.Deliveries()
			if c.Deliveries >= budget {
				c.Full = true
				return events, nil
			}
		}
		if len(rows) < step {
			return events, nil
		}
	}
}
