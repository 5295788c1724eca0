package subscriptions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/workflows"
)

var errNoSubscription = errors.New("no such subscription")

type row struct {
	ID             int64          `db:"id"`
	URL            string         `db:"url"`
	EventTypes     pq.StringArray `db:"event_types"`
	Active         bool           `db:"active"`
	Description    string         `db:"description"`
	Headers        []byte         `db:"headers"`
	DisabledReason string         `db:"disabled_reason"`
	DisabledAt     *time.Time     `db:"disabled_at"`
	CreatedAt      time.Time      `db:"created_at"`
	UpdatedAt      time.Time      `db:"updated_at"`
}

const columns = `id, url, event_types, active, description, headers, disabled_reason, disabled_at, created_at, updated_at`

func (r row) model() model.Subscription {
	s := model.Subscription{
		ID: r.ID, URL: r.URL, Active: &r.Active, Description: r.Description,
		DisabledReason: r.DisabledReason, DisabledAt: r.DisabledAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for _, t := range r.EventTypes {
		s.EventTypes = append(s.EventTypes, model.EventTypeName(t))
	}
	_ = json.Unmarshal(r.Headers, &s.Headers)
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
	return s
}

func eventTypes(s model.Subscription) pq.StringArray {
	out := make(pq.StringArray, len(s.EventTypes))
	for i, t := range s.EventTypes {
		out[i] = string(t)
	}
	return out
}

// active is the requested active flag, true when not given.
func active(s model.Subscription) bool { return s.Active == nil || *s.Active }

func (h *handlers) load(ctx context.Context, tenant string, id int64) (row, error) {
	var r row
	err := h.d.DB.GetContext(ctx, &r, `SELECT `+columns+` FROM hook_subscriptions WHERE id = $1 AND tenant_id = $2`, id, tenant)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errNoSubscription
	}
	if err != nil {
		return r, fmt.Errorf("load subscription: %w", err)
	}
	return r, nil
}

func (h *handlers) create(ctx context.Context, in *struct{ Body model.Subscription }) (*subscriptionOutput, error) {
	if err := h.checkBody(ctx, &in.Body); err != nil {
		return nil, err
	}
	if h.secrets == nil {
		return nil, rest.Problem(http.StatusServiceUnavailable, "TOCSIN_SECRETS_KEY is not set, so signing secrets cannot be stored")
	}
	tenant := rest.Tenant(ctx)
	secret, err := hooks.NewSecret()
	if err != nil {
		return nil, fmt.Errorf("generate secret: %w", err)
	}
	sealed, err := h.secrets.Seal([]byte(secret), activities.SecretAD(tenant))
	if err != nil {
		return nil, err
	}
	headers, _ := json.Marshal(in.Body.Headers)
	var r row
	if err := h.d.DB.GetContext(ctx, &r, `
		INSERT INTO hook_subscriptions (tenant_id, url, event_types, active, description, headers, secret_encrypted)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+columns,
		tenant, in.Body.URL, eventTypes(in.Body), active(in.Body), in.Body.Description, headers, sealed); err != nil {
		return nil, fmt.Errorf("insert subscription: %w", err)
	}
	out := &subscriptionOutput{Body: r.model()}
	out.Body.Secret = secret
	return out, nil
}

type listInput struct {
	rest.PageParams
}

var subscriptionSort = map[string]string{
	"id": "id", "url": "url", "active": "active", "createdat": "created_at", "updatedat": "updated_at",
}

func (h *handlers) list(ctx context.Context, in *listInput) (*struct {
	Body model.PagedSubscriptionResponse
}, error) {
	order, err := rest.OrderBy(in.Sort, subscriptionSort, "id", "id")
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	var total int64
	if err := h.d.DB.GetContext(ctx, &total, `SELECT count(*) FROM hook_subscriptions WHERE tenant_id = $1`, tenant); err != nil {
		return nil, fmt.Errorf("count subscriptions: %w", err)
	}
	var rows []row
	if err := h.d.DB.SelectContext(ctx, &rows, `SELECT `+columns+` FROM hook_subscriptions WHERE tenant_id = $1
		ORDER BY `+order+` LIMIT $2 OFFSET $3`, tenant, in.Limit(), in.Offset()); err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	out := &struct {
		Body model.PagedSubscriptionResponse
	}{}
	out.Body.Paging = rest.NewPaging(in.PageParams, total)
	out.Body.Items = make([]model.Subscription, len(rows))
	for i, r := range rows {
		out.Body.Items[i] = r.model()
	}
	return out, nil
}

func (h *handlers) get(ctx context.Context, in *PathID) (*subscriptionOutput, error) {
	r, err := h.load(ctx, rest.Tenant(ctx), in.ID)
	if err != nil {
		return nil, notFound(err)
	}
	return &subscriptionOutput{Body: r.model()}, nil
}

func (h *handlers) update(ctx context.Context, in *struct {
	PathID
	Body model.Subscription
}) (*subscriptionOutput, error) {
	if err := h.checkBody(ctx, &in.Body); err != nil {
		return nil, err
	}
	headers, _ := json.Marshal(in.Body.Headers)
	var r row
	err := h.d.DB.GetContext(ctx, &r, `
		UPDATE hook_subscriptions SET url = $3, event_types = $4, active = $5, description = $6, headers = $7,
			disabled_reason = CASE WHEN $5 THEN '' ELSE disabled_reason END,
			disabled_at = CASE WHEN $5 THEN NULL ELSE disabled_at END,
			updated_at = now()
		WHERE id = $1 AND tenant_id = $2 RETURNING `+columns,
		in.ID, rest.Tenant(ctx), in.Body.URL, eventTypes(in.Body), active(in.Body), in.Body.Description, headers)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rest.NotFound("subscription")
	}
	if err != nil {
		return nil, fmt.Errorf("update subscription: %w", err)
	}
	return &subscriptionOutput{Body: r.model()}, nil
}

func (h *handlers) delete(ctx context.Context, in *PathID) (*struct{}, error) {
	res, err := h.d.DB.ExecContext(ctx, `DELETE FROM hook_subscriptions WHERE id = $1 AND tenant_id = $2`, in.ID, rest.Tenant(ctx))
	if err != nil {
		return nil, fmt.Errorf("delete subscription: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, rest.NotFound("subscription")
	}
	return nil, nil
}

func (h *handlers) eventTypes(ctx context.Context, in *listInput) (*struct{ Body model.PagedEventTypeResponse }, error) {
	order, err := rest.OrderBy(in.Sort, map[string]string{"name": "name"}, "name", "name")
	if err != nil {
		return nil, err
	}
	all := make([]model.EventType, len(hooks.Events))
	for i, e := range hooks.Events {
		body, _ := hooks.Body(e.Name, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), mustJSON(e.Example))
		var example map[string]any
		_ = json.Unmarshal(body, &example)
		all[i] = model.EventType{Name: model.EventTypeName(e.Name), Description: e.Description, ExamplePayload: example}
	}
	if strings.HasPrefix(order, "name DESC") {
		for i, j := 0, len(all)-1; i < j; i, j = i+1, j-1 {
			all[i], all[j] = all[j], all[i]
		}
	}
	out := &struct{ Body model.PagedEventTypeResponse }{}
	out.Body.Paging = rest.NewPaging(in.PageParams, int64(len(all)))
	from := min(in.Offset(), len(all))
	to := min(from+in.Limit(), len(all))
	out.Body.Items = all[from:to]
	return out, nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type historyRow struct {
	ID             int64      `db:"id"`
	SubscriptionID int64      `db:"subscription_id"`
	EventID        string     `db:"event_id"`
	EventType      string     `db:"event_type"`
	Attempt        int        `db:"attempt"`
	RequestedAt    time.Time  `db:"requested_at"`
	ResponseStatus *int       `db:"response_status"`
	LatencyMs      int64      `db:"latency_ms"`
	Outcome        string     `db:"outcome"`
	Error          string     `db:"error"`
	NextRetryAt    *time.Time `db:"next_retry_at"`
}

const historyColumns = `id, subscription_id, event_id, event_type, attempt, requested_at, response_status, latency_ms, outcome, error, next_retry_at`

func (r historyRow) model() model.SubscriptionHistory {
	m := model.SubscriptionHistory{
		ID: r.ID, SubscriptionID: r.SubscriptionID, EventID: r.EventID, EventType: model.EventTypeName(r.EventType),
		Attempt: r.Attempt, RequestedAt: r.RequestedAt, LatencyMs: r.LatencyMs,
		Outcome: model.HookDeliveryOutcome(r.Outcome), Error: r.Error, NextRetryAt: r.NextRetryAt,
	}
	if r.ResponseStatus != nil {
		m.ResponseStatus = *r.ResponseStatus
	}
	return m
}

var historySort = map[string]string{
	"requestedat": "requested_at", "attempt": "attempt", "eventtype": "event_type",
	"responsestatus": "response_status", "outcome": "outcome",
}

func (h *handlers) history(ctx context.Context, in *struct {
	PathID
	rest.PageParams
}) (*struct {
	Body model.PagedSubscriptionHistoryResponse
}, error) {
	order, err := rest.OrderBy(in.Sort, historySort, "requested_at DESC", "id DESC")
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	if _, err := h.load(ctx, tenant, in.ID); err != nil {
		return nil, notFound(err)
	}
	const where = `tenant_id = $1 AND subscription_id = $2 AND requested_at >= now() - interval '30 days'`
	var total int64
	if err := h.d.DB.GetContext(ctx, &total, `SELECT count(*) FROM hook_attempts WHERE `+where, tenant, in.ID); err != nil {
		return nil, fmt.Errorf("count history: %w", err)
	}
	var rows []historyRow
	if err := h.d.DB.SelectContext(ctx, &rows, `SELECT `+historyColumns+` FROM hook_attempts WHERE `+where+`
		ORDER BY `+order+` LIMIT $3 OFFSET $4`, tenant, in.ID, in.Limit(), in.Offset()); err != nil {
		return nil, fmt.Errorf("list history: %w", err)
	}
	out := &struct {
		Body model.PagedSubscriptionHistoryResponse
	}{}
	out.Body.Paging = rest.NewPaging(in.PageParams, total)
	out.Body.Items = make([]model.SubscriptionHistory, len(rows))
	for i, r := range rows {
		out.Body.Items[i] = r.model()
	}
	return out, nil
}

func (h *handlers) test(ctx context.Context, in *PathID) (*struct{ Body model.SubscriptionHistory }, error) {
	tenant := rest.Tenant(ctx)
	if _, err := h.load(ctx, tenant, in.ID); err != nil {
		return nil, notFound(err)
	}
	event := activities.HookEvent{
		ID: "evt_" + uuid.NewString(), Type: storage.EventSubscriptionTest, CreatedAt: time.Now().UTC(),
		Payload: mustJSON(events.SubscriptionTest{SubscriptionID: in.ID, Message: events.TestMessage}),
	}
	ctx, cancel := context.WithTimeout(ctx, h.d.Config.HookTimeout+30*time.Second)
	defer cancel()
	run, err := h.d.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflows.HookDeliveryID(in.ID, event.ID), TaskQueue: h.d.Config.TemporalTaskQueue,
	}, workflows.HookDelivery, workflows.HookDeliveryInput{Tenant: tenant, SubscriptionID: in.ID, Event: event, Test: true})
	if err != nil {
		return nil, rest.Unavailable("temporal", err)
	}
	var res workflows.HookDeliveryResult
	if err := run.Get(ctx, &res); err != nil {
		return nil, rest.Unavailable("the worker", err)
	}
	if res.Outcome == activities.Skipped {
		return nil, rest.NotFound("subscription")
	}
	var r historyRow
	if err := h.d.DB.GetContext(ctx, &r, `SELECT `+historyColumns+` FROM hook_attempts WHERE id = $1 AND tenant_id = $2`,
		res.LastAttemptID, tenant); err != nil {
		return nil, fmt.Errorf("read test attempt: %w", err)
	}
	return &struct{ Body model.SubscriptionHistory }{Body: r.model()}, nil
}
