package activities

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/secrets"
)

// ErrTypeHookSecret marks a signing secret that cannot be decrypted: retrying
// will not help (the TOCSIN_SECRETS_KEY changed).
const ErrTypeHookSecret = "HookSecret"

// ErrTypeHookPayload marks an event whose payload cannot be encoded: retrying
// will not help.
const ErrTypeHookPayload = "HookPayload"

// HookSender holds what hook deliveries need: the SSRF-checking HTTP
// client, the box that opens signing secrets and the deliveries counter.
type HookSender struct {
	Client     *http.Client
	Secrets    *secrets.Box
	Deliveries *prometheus.CounterVec
}

// NewHookSender builds a HookSender from the settings and the box that opens
// signing secrets. A bad TOCSIN_HOOK_ALLOW_HOSTS is logged and nothing extra
// is allowed.
func NewHookSender(cfg config.Config, box *secrets.Box, logger *slog.Logger, reg prometheus.Registerer) *HookSender {
	p, err := hooks.NewPolicy(cfg.HookAllowHosts, cfg.HookAllowHTTP)
	if err != nil {
		logger.Error("hook policy; allowing no extra hosts", "err", err)
		p, _ = hooks.NewPolicy(nil, cfg.HookAllowHTTP)
	}
	return &HookSender{Client: p.Client(cfg.HookTimeout), Secrets: box, Deliveries: hooks.NewDeliveriesCounter(reg)}
}

// HookEvent is the event a delivery carries.
type HookEvent struct {
	ID        string
	Type      string
	CreatedAt time.Time
	Payload   json.RawMessage
}

// HookAttempt asks for one delivery attempt.
type HookAttempt struct {
	Tenant         string
	SubscriptionID int64
	Event          HookEvent
	Attempt        int
	// RetryIn is the wait before the next attempt should this one fail;
	// Final says there is none.
	RetryIn time.Duration
	Final   bool
	// Test delivers even to an inactive subscription.
	Test bool
}

// Skipped is the outcome of an attempt that was not made because the
// subscription is gone or inactive.
const Skipped = "Skipped"

// HookAttemptResult is what one attempt did.
type HookAttemptResult struct {
	// Outcome is a hooks.Outcome, or Skipped.
	Outcome   string
	AttemptID int64
	// NextIn is the wait before the next attempt (the schedule's, or the
	// receiver's Retry-After); 0 when there is none.
	NextIn time.Duration
}

// SecretAD is the associated data sealing a subscription's secret: the
// ciphertext only opens for its own tenant.
func SecretAD(tenant string) []byte { return []byte("hook-secret:" + tenant) }

// AttemptHook makes one signed POST of an event to a subscription and
// records it in the history. A 410 disables the subscription. A failed POST
// is a result, not an error: errors are left for the database and the
// secret, which Temporal retries.
func (a *Activities) AttemptHook(ctx context.Context, in HookAttempt) (HookAttemptResult, error) {
	var sub struct {
		URL     string `db:"url"`
		Headers []byte `db:"headers"`
		Secret  []byte `db:"secret_encrypted"`
		Active  bool   `db:"active"`
	}
	err := a.DB.GetContext(ctx, &sub, `
		SELECT url, headers, secret_encrypted, active FROM hook_subscriptions
		WHERE id = $1 AND tenant_id = $2`, in.SubscriptionID, in.Tenant)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !sub.Active && !in.Test) {
		return HookAttemptResult{Outcome: Skipped}, nil
	}
	if err != nil {
		return HookAttemptResult{}, fmt.Errorf("load subscription: %w", err)
	}
	if a.Hooks == nil || a.Hooks.Secrets == nil {
		return HookAttemptResult{}, temporal.NewNonRetryableApplicationError("no secrets key configured", ErrTypeHookSecret, nil)
	}
	secret, err := a.Hooks.Secrets.Open(sub.Secret, SecretAD(in.Tenant))
	if err != nil {
		return HookAttemptResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeHookSecret, nil)
	}
	headers := map[string]string{}
	if err := json.Unmarshal(sub.Headers, &headers); err != nil {
		return HookAttemptResult{}, fmt.Errorf("decode headers: %w", err)
	}
	body, err := hooks.Body(in.Event.Type, in.Event.CreatedAt, in.Event.Payload)
	if err != nil {
		return HookAttemptResult{}, temporal.NewNonRetryableApplicationError("encode payload: "+err.Error(), ErrTypeHookPayload, nil)
	}
	requested := time.Now()
	r := hooks.Send(ctx, a.Hooks.Client, hooks.Message{
		URL: sub.URL, ID: in.Event.ID, Timestamp: requested, Body: body, Secret: string(secret), Headers: headers,
	})
	res := HookAttemptResult{Outcome: string(r.Outcome)}
	var next *time.Time
	if (r.Outcome == hooks.Failed || r.Outcome == hooks.Refused) && !in.Final {
		res.NextIn = in.RetryIn
		if r.RetryAfter > 0 {
			res.NextIn = r.RetryAfter
		}
		t := requested.Add(r.Latency + res.NextIn)
		next = &t
	}
	var status *int
	if r.Status != 0 {
		status = &r.Status
	}
	err = a.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &res.AttemptID, `
			INSERT INTO hook_attempts (tenant_id, subscription_id, event_id, event_type, attempt, requested_at,
				response_status, latency_ms, outcome, error, next_retry_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (subscription_id, event_id, attempt) DO UPDATE SET
				requested_at = excluded.requested_at, response_status = excluded.response_status,
				latency_ms = excluded.latency_ms, outcome = excluded.outcome, error = excluded.error,
				next_retry_at = excluded.next_retry_at
			RETURNING id`,
			in.Tenant, in.SubscriptionID, in.Event.ID, in.Event.Type, in.Attempt, requested,
			status, r.Latency.Milliseconds(), string(r.Outcome), r.Error, next); err != nil {
			return fmt.Errorf("record hook attempt: %w", err)
		}
		if r.Outcome == hooks.Gone {
			if _, err := tx.ExecContext(ctx, `
				UPDATE hook_subscriptions SET active = false, disabled_reason = $3, disabled_at = now(), updated_at = now()
				WHERE id = $1 AND tenant_id = $2`,
				in.SubscriptionID, in.Tenant, "the target answered 410 Gone to event "+in.Event.ID+" (attempt "+strconv.Itoa(in.Attempt)+")"); err != nil {
				return fmt.Errorf("disable subscription: %w", err)
			}
		}
		return nil
	})
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == "23503" { // the subscription was deleted meanwhile
		return HookAttemptResult{Outcome: Skipped}, nil
	}
	if err != nil {
		return HookAttemptResult{}, err
	}
	a.Hooks.Deliveries.WithLabelValues(string(r.Outcome)).Inc()
	return res, nil
}

// PurgeHookHistory deletes delivery attempts, and events dispatched, more
// than days days ago. It is a retention sweep over every tenant.
func (a *Activities) PurgeHookHistory(ctx context.Context, days int) (int64, error) {
	res, err := a.DB.ExecContext(ctx, `DELETE FROM hook_attempts WHERE requested_at < now() - make_interval(days => $1)`, days)
	if err != nil {
		return 0, fmt.Errorf("purge hook history: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := a.DB.ExecContext(ctx, `DELETE FROM events WHERE dispatched_at < now() - make_interval(days => $1)`, days); err != nil {
		return n, fmt.Errorf("purge dispatched events: %w", err)
	}
	return n, nil
}
