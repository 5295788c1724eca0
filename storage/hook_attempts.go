package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// HookTarget is where a subscription delivers: its URL, extra headers (a
// JSON object, sealed; or plain in a row written before headers were
// sealed) and sealed signing secret.
type HookTarget struct {
	URL           string `db:"url"`
	HeadersSealed []byte `db:"headers_encrypted"`
	PlainHeaders  []byte `db:"headers"`
	Secret        []byte `db:"secret_encrypted"`
	Active        bool   `db:"active"`
}

// HookAttempt is one attempt to deliver an event to a subscription.
type HookAttempt struct {
	Tenant         string
	SubscriptionID int64
	EventID        string
	EventType      string
	Attempt        int
	RequestedAt    time.Time
	// ResponseStatus is nil when no response came.
	ResponseStatus *int
	LatencyMs      int64
	Outcome        string
	Error          string
	// NextRetryAt is when the next attempt is due, nil when none follows.
	NextRetryAt *time.Time
}

// HookAttempts records the delivery attempts of events to hook
// subscriptions (hook_attempts) and purges old ones.
type HookAttempts struct {
	DB *DB
}

// Target returns the tenant's subscription id, ErrNotFound when it has none.
func (s *HookAttempts) Target(ctx context.Context, tenant string, id int64) (HookTarget, error) {
	return GetOne[HookTarget](ctx, s.DB, "load subscription", `
		SELECT url, headers_encrypted, headers, secret_encrypted, active FROM hook_subscriptions
		WHERE id = $1 AND tenant_id = $2`, id, tenant)
}

// Record stores the attempt (a retried attempt replaces its row) and
// returns its id. A disable reason that is not empty also deactivates the
// subscription, in the same transaction and before the attempt is written:
// deleting the subscription locks it and then its attempts, so a retried
// attempt that held its row while waiting for the subscription would
// deadlock with it. ErrNotFound when the subscription was deleted meanwhile.
func (s *HookAttempts) Record(ctx context.Context, a HookAttempt, disable string) (int64, error) {
	var id int64
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if disable != "" {
			if _, err := tx.ExecContext(ctx, `
				UPDATE hook_subscriptions SET active = false, disabled_reason = $3, disabled_at = now(), updated_at = now()
				WHERE id = $1 AND tenant_id = $2`,
				a.SubscriptionID, a.Tenant, disable); err != nil {
				return fmt.Errorf("disable subscription: %w", err)
			}
		}
		if err := tx.GetContext(ctx, &id, `
			INSERT INTO hook_attempts (tenant_id, subscription_id, event_id, event_type, attempt, requested_at,
				response_status, latency_ms, outcome, error, next_retry_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (subscription_id, event_id, attempt) DO UPDATE SET
				requested_at = excluded.requested_at, response_status = excluded.response_status,
				latency_ms = excluded.latency_ms, outcome = excluded.outcome, error = excluded.error,
				next_retry_at = excluded.next_retry_at
			RETURNING id`,
			a.Tenant, a.SubscriptionID, a.EventID, a.EventType, a.Attempt, a.RequestedAt,
			a.ResponseStatus, a.LatencyMs, a.Outcome, a.Error, a.NextRetryAt); err != nil {
			return fmt.Errorf("record hook attempt: %w", err)
		}
		return nil
	})
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23503" { // the subscription was deleted meanwhile
		return 0, ErrNotFound
	}
	return id, err
}

// Purge deletes, for every tenant, delivery attempts and dispatched events
// more than days days old, and returns how many attempts it deleted.
func (s *HookAttempts) Purge(ctx context.Context, days int) (int64, error) {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM hook_attempts WHERE requested_at < now() - make_interval(days => $1)`, days)
	if err != nil {
		return 0, fmt.Errorf("purge hook history: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM events WHERE dispatched_at < now() - make_interval(days => $1)`, days); err != nil {
		return n, fmt.Errorf("purge dispatched events: %w", err)
	}
	return n, nil
}
