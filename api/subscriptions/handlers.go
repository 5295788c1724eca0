package subscriptions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/workflows"
)

// subscriptionModel answers r with its url and its custom headers h masked.
func subscriptionModel(r hooksubs.Subscription, h map[string]string) model.Subscription {
	s := model.Subscription{
		ID: r.ID, URL: secrets.MaskURL(r.URL), Active: &r.Active, Description: r.Description, Headers: hooks.MaskHeaders(h),
		DisabledReason: r.DisabledReason, DisabledAt: r.DisabledAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	for _, t := range r.EventTypes {
		s.EventTypes = append(s.EventTypes, model.SubscribableEventType(t))
	}
	return s
}

// answer answers the tenant's r with its custom headers masked or, when
// they cannot be opened, without them and marked unreadable: one damaged
// subscription does not hide the others, and can be repaired by sending its
// headers again.
func (h *handlers) answer(ctx context.Context, tenant string, r hooksubs.Subscription) (model.Subscription, error) {
	headers, err := h.headers(ctx, tenant, r)
	if errors.Is(err, errUnreadable) {
		m := subscriptionModel(r, nil)
		m.HeadersUnreadable = true
		return m, nil
	}
	if err != nil {
		return model.Subscription{}, err
	}
	return subscriptionModel(r, headers), nil
}

// errUnreadable is returned by headers for custom headers that cannot be
// opened: sealed under another TOCSIN_SECRETS_KEY, or damaged.
var errUnreadable = errors.New("the custom headers cannot be read")

// headers opens the custom headers of the tenant's subscription r. Headers
// that cannot be opened are logged, without their content, and are
// errUnreadable.
func (h *handlers) headers(ctx context.Context, tenant string, r hooksubs.Subscription) (map[string]string, error) {
	if r.HeadersSealed != nil && h.secrets == nil {
		return nil, noSecretsKey()
	}
	headers, err := hooks.OpenHeaders(h.secrets, tenant, r.ID, r.HeadersSealed, r.PlainHeaders)
	if err != nil {
		h.d.Logger.WarnContext(ctx, "hook subscription's custom headers cannot be read; they must be sent again",
			"tenant", tenant, "subscription", r.ID, "err", err)
		return nil, errUnreadable
	}
	return headers, nil
}

// maskedHeader returns the first name (in sorted order) in h whose value
// is masked, "" when none is.
func maskedHeader(h map[string]string) string {
	names := make([]string, 0, len(h))
	for name, value := range h {
		if secrets.IsMasked(value) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return slices.Min(names)
}

func noSecretsKey() error {
	return rest.Problem(http.StatusServiceUnavailable, "TOCSIN_SECRETS_KEY is not set, so signing secrets and custom headers cannot be stored")
}

// settings are the stored settings of a subscription as the client gave
// it, its headers sealed for the tenant's subscription id; active is true
// when not given.
func (h *handlers) settings(tenant string, id int64, s model.Subscription) (hooksubs.Settings, error) {
	sealed, err := hooks.SealHeaders(h.secrets, tenant, id, s.Headers)
	if err != nil {
		return hooksubs.Settings{}, err
	}
	set := hooksubs.Settings{URL: s.URL, EventTypes: make([]string, len(s.EventTypes)), Active: s.Active == nil || *s.Active,
		Description: s.Description, HeadersSealed: sealed}
	for i, t := range s.EventTypes {
		set.EventTypes[i] = string(t)
	}
	return set, nil
}

func (h *handlers) create(ctx context.Context, in *struct{ Body model.Subscription }) (*rest.Output[model.Subscription], error) {
	if err := h.checkBody(ctx, &in.Body, ""); err != nil {
		return nil, err
	}
	if h.secrets == nil {
		return nil, noSecretsKey()
	}
	// Nothing is stored yet to keep: a masked value is a mistake.
	if name, err := hooks.KeepMaskedHeaders(in.Body.Headers, in.Body.URL, nil, ""); err != nil {
		return nil, rest.Invalid("body", "headers."+name, err.Error(), nil)
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
	id, err := h.subs.NewID(ctx)
	if err != nil {
		return nil, err
	}
	set, err := h.settings(tenant, id, in.Body)
	if err != nil {
		return nil, err
	}
	r, err := h.subs.Create(ctx, tenant, id, set, sealed)
	if errors.Is(err, hooksubs.ErrTooMany) {
		msg := fmt.Sprintf("the tenant has %d hook subscriptions, the most it may have: delete one before creating another", hooksubs.MaxPerTenant)
		return nil, rest.Problem(http.StatusConflict, msg, rest.Failure("body", "", msg, nil))
	}
	if err != nil {
		return nil, err
	}
	out := &rest.Output[model.Subscription]{Body: subscriptionModel(r, in.Body.Headers)}
	out.Body.Secret = secret
	return out, nil
}

type listInput struct {
	rest.PageParams
}

func (h *handlers) list(ctx context.Context, in *listInput) (*rest.Output[model.PagedSubscriptionResponse], error) {
	order, err := rest.SortBy(in.Sort, hooksubs.Sorting)
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	rows, total, err := h.subs.List(ctx, tenant, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, err
	}
	items := make([]model.Subscription, len(rows))
	for i, r := range rows {
		if items[i], err = h.answer(ctx, tenant, r); err != nil {
			return nil, err
		}
	}
	return rest.Answer(model.PagedSubscriptionResponse{Paging: rest.NewPaging(in.PageParams, total), Items: items}), nil
}

func (h *handlers) get(ctx context.Context, in *PathID) (*rest.Output[model.Subscription], error) {
	tenant := rest.Tenant(ctx)
	r, err := h.subs.Get(ctx, tenant, in.ID)
	if err != nil {
		return nil, notFound(err)
	}
	m, err := h.answer(ctx, tenant, r)
	if err != nil {
		return nil, err
	}
	return rest.Answer(m), nil
}

func (h *handlers) update(ctx context.Context, in *struct {
	PathID
	Body model.Subscription
}) (*rest.Output[model.Subscription], error) {
	tenant := rest.Tenant(ctx)
	old, err := h.subs.Get(ctx, tenant, in.ID)
	if err != nil {
		return nil, notFound(err)
	}
	if err := h.checkBody(ctx, &in.Body, old.URL); err != nil {
		return nil, err
	}
	// The stored headers are opened only to keep masked values: values
	// sent in full replace headers that can no longer be read.
	var stored map[string]string
	if masked := maskedHeader(in.Body.Headers); masked != "" {
		if stored, err = h.headers(ctx, tenant, old); errors.Is(err, errUnreadable) {
			return nil, rest.Invalid("body", "headers."+masked, "the value of "+masked+" is masked but the stored headers "+
				"cannot be read (headersUnreadable): send every header value itself", nil)
		} else if err != nil {
			return nil, err
		}
	}
	if name, err := hooks.KeepMaskedHeaders(in.Body.Headers, in.Body.URL, stored, old.URL); err != nil {
		return nil, rest.Invalid("body", "headers."+name, err.Error(), nil)
	}
	if len(in.Body.Headers) > 0 && h.secrets == nil {
		return nil, noSecretsKey()
	}
	set, err := h.settings(tenant, in.ID, in.Body)
	if err != nil {
		return nil, err
	}
	r, err := h.subs.Update(ctx, tenant, in.ID, set)
	if err != nil {
		return nil, notFound(err)
	}
	return rest.Answer(subscriptionModel(r, in.Body.Headers)), nil
}

func (h *handlers) delete(ctx context.Context, in *PathID) (*struct{}, error) {
	if err := h.subs.Delete(ctx, rest.Tenant(ctx), in.ID); err != nil {
		return nil, notFound(err)
	}
	return nil, nil
}

func (h *handlers) eventTypes(ctx context.Context, in *listInput) (*rest.Output[model.PagedEventTypeResponse], error) {
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
	out := &rest.Output[model.PagedEventTypeResponse]{}
	out.Body.Paging = rest.NewPaging(in.PageParams, storage.ExactTotal(int64(len(all))))
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

func historyModel(r hooksubs.Attempt) model.SubscriptionHistory {
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

func (h *handlers) history(ctx context.Context, in *struct {
	PathID
	rest.PageParams
}) (*rest.Output[model.PagedSubscriptionHistoryResponse], error) {
	order, err := rest.SortBy(in.Sort, hooksubs.HistorySorting)
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	if _, err := h.subs.Get(ctx, tenant, in.ID); err != nil {
		return nil, notFound(err)
	}
	rows, total, err := h.subs.History(ctx, tenant, in.ID, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, err
	}
	return rest.Answer(model.PagedSubscriptionHistoryResponse{Paging: rest.NewPaging(in.PageParams, total), Items: rest.Items(rows, historyModel)}), nil
}

func (h *handlers) test(ctx context.Context, in *PathID) (*rest.Output[model.SubscriptionHistory], error) {
	tenant := rest.Tenant(ctx)
	wait, err := h.subs.ClaimTest(ctx, tenant, in.ID)
	if err != nil {
		return nil, notFound(err)
	}
	if wait > 0 {
		secs := int(math.Ceil(wait.Seconds()))
		return nil, rest.Problem(http.StatusTooManyRequests, fmt.Sprintf(
			"the subscription was sent too many test events (%d at once, then one every %d seconds): nothing was sent; retry in %d seconds",
			hooksubs.TestBurst, int(hooksubs.TestInterval.Seconds()), secs)).WithHeader("Retry-After", strconv.Itoa(secs))
	}
	event := activities.HookEvent{
		ID: "evt_" + uuid.NewString(), Type: storage.EventSubscriptionTest, CreatedAt: time.Now().UTC(),
		Payload: mustJSON(events.SubscriptionTest{SubscriptionID: in.ID, Message: events.TestMessage}),
	}
	ctx, cancel := context.WithTimeout(ctx, h.d.Config.HookTimeout+30*time.Second)
	defer cancel()
	// A request waits for the test: it goes before routine work, as file
	// processing does, with its tenant as the fairness key.
	o := dispatch.HookOptions(in.ID, storage.Event{ID: event.ID, Tenant: tenant}, h.d.Config.TemporalTaskQueue)
	o.Priority.PriorityKey = storage.PriorityInteractive
	run, err := h.d.Temporal.ExecuteWorkflow(ctx, o, workflows.HookDelivery, workflows.HookDeliveryInput{Tenant: tenant, SubscriptionID: in.ID, Event: event, Test: true})
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
	r, err := h.subs.Attempt(ctx, tenant, res.LastAttemptID)
	if err != nil {
		return nil, fmt.Errorf("read test attempt: %w", err)
	}
	return rest.Answer(historyModel(r)), nil
}
