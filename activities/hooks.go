package activities

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
)

// ErrTypeHookSecret marks a worker without a secrets box to open signing
// secrets and custom headers: retrying will not help. A secret or headers
// that do not open with the box fail the attempt instead (UnreadableSecret,
// UnreadableHeaders), recorded in the history.
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

// NewHookSender builds a HookSender whose client follows the outbound
// policy and gives up after timeout (TOCSIN_HOOK_TIMEOUT), with the box
// that opens signing secrets and the deliveries counter registered in reg.
func NewHookSender(policy *hooks.Policy, timeout time.Duration, box *secrets.Box, reg prometheus.Registerer) *HookSender {
	return &HookSender{Client: policy.Client(timeout), Secrets: box, Deliveries: hooks.NewDeliveriesCounter(reg)}
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
	store := a.hookAttempts()
	sub, err := store.Target(ctx, in.Tenant, in.SubscriptionID)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && !sub.Active && !in.Test) {
		return HookAttemptResult{Outcome: Skipped}, nil
	}
	if err != nil {
		return HookAttemptResult{}, err
	}
	if a.Hooks == nil || a.Hooks.Secrets == nil {
		return HookAttemptResult{}, temporal.NewNonRetryableApplicationError("no secrets key configured", ErrTypeHookSecret, nil)
	}
	body, err := hooks.Body(in.Event.Type, in.Event.CreatedAt, in.Event.Payload)
	if err != nil {
		return HookAttemptResult{}, temporal.NewNonRetryableApplicationError("encode payload: "+err.Error(), ErrTypeHookPayload, nil)
	}
	requested := time.Now()
	// A signing secret or custom headers that do not open fail the attempt
	// without sending it, recorded with the reason like any failure (and
	// retried while the schedule lasts: the headers can be sent again).
	var r hooks.Result
	secret, err := a.Hooks.Secrets.Open(sub.Secret, SecretAD(in.Tenant))
	if err != nil {
		r = hooks.Result{Outcome: hooks.Failed, Error: UnreadableSecret}
		a.logUnreadable(in, "signing secret", err)
	}
	var headers map[string]string
	if err == nil {
		if headers, err = hooks.OpenHeaders(a.Hooks.Secrets, in.Tenant, in.SubscriptionID, sub.HeadersSealed, sub.PlainHeaders); err != nil {
			r = hooks.Result{Outcome: hooks.Failed, Error: UnreadableHeaders}
			a.logUnreadable(in, "custom headers", err)
		}
	}
	if err == nil {
		r = hooks.Send(ctx, a.Hooks.Client, hooks.Message{
			URL: sub.URL, ID: in.Event.ID, Timestamp: requested, Body: body, Secret: string(secret), Headers: headers,
		})
	}
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
	disable := ""
	if r.Outcome == hooks.Gone {
		disable = "the target answered 410 Gone to event " + in.Event.ID + " (attempt " + strconv.Itoa(in.Attempt) + ")"
	}
	res.AttemptID, err = store.Record(ctx, storage.HookAttempt{Tenant: in.Tenant, SubscriptionID: in.SubscriptionID,
		EventID: in.Event.ID, EventType: in.Event.Type, Attempt: in.Attempt, RequestedAt: requested, ResponseStatus: status,
		LatencyMs: r.Latency.Milliseconds(), Outcome: string(r.Outcome), Error: r.Error, NextRetryAt: next}, disable)
	if errors.Is(err, storage.ErrNotFound) { // the subscription was deleted meanwhile
		return HookAttemptResult{Outcome: Skipped}, nil
	}
	if err != nil {
		return HookAttemptResult{}, err
	}
	a.Hooks.Deliveries.WithLabelValues(string(r.Outcome)).Inc()
	return res, nil
}

// UnreadableSecret and UnreadableHeaders are the error of an attempt not
// sent because the subscription's signing secret or custom headers cannot
// be decrypted.
const (
	UnreadableSecret = "not sent: the signing secret cannot be decrypted with the current TOCSIN_SECRETS_KEY " +
		"(changed, or the stored value is damaged); restore the key, or create the subscription again"
	UnreadableHeaders = "not sent: the custom headers cannot be decrypted with the current TOCSIN_SECRETS_KEY " +
		"(changed, or the stored value is damaged); send them again with updateSubscription"
)

// logUnreadable logs, without its content, what of a subscription could
// not be opened for an attempt.
func (a *Activities) logUnreadable(in HookAttempt, what string, err error) {
	if a.Logger != nil {
		a.Logger.Warn("hook attempt not sent: the subscription's "+what+" cannot be decrypted",
			"tenant", in.Tenant, "subscription", in.SubscriptionID, "event", in.Event.ID, "err", err)
	}
}

// PurgeHookHistory deletes delivery attempts, and events dispatched, more
// than days days ago. It is a retention sweep over every tenant.
func (a *Activities) PurgeHookHistory(ctx context.Context, days int) (int64, error) {
	return a.hookAttempts().Purge(ctx, days)
}

// hookAttemptStore reads subscriptions' targets and records delivery
// attempts (storage.HookAttempts).
type hookAttemptStore interface {
	Target(ctx context.Context, tenant string, id int64) (storage.HookTarget, error)
	Record(ctx context.Context, a storage.HookAttempt, disable string) (int64, error)
	Purge(ctx context.Context, days int) (int64, error)
}

var _ hookAttemptStore = (*storage.HookAttempts)(nil)

func (a *Activities) hookAttempts() hookAttemptStore { return &storage.HookAttempts{DB: a.DB} }
