// Package subscriptions serves hook subscriptions: the events tocsin pushes to other systems.
package subscriptions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
)

type handlers struct {
	d       rest.Deps
	policy  *hooks.Policy
	secrets *secrets.Box
	subs    subscriptionStore
}

// subscriptionStore keeps the tenant's hook subscriptions and reads their history.
type subscriptionStore interface {
	Get(ctx context.Context, tenant string, id int64) (hooksubs.Subscription, error)
	NewID(ctx context.Context) (int64, error)
	Create(ctx context.Context, tenant string, id int64, set hooksubs.Settings, sealedSecret []byte) (hooksubs.Subscription, error)
	List(ctx context.Context, tenant, order string, limit, offset int) ([]hooksubs.Subscription, storage.Total, error)
	Update(ctx context.Context, tenant string, id int64, set hooksubs.Settings) (hooksubs.Subscription, error)
	Delete(ctx context.Context, tenant string, id int64) error
	History(ctx context.Context, tenant string, id int64, order string, limit, offset int) ([]hooksubs.Attempt, storage.Total, error)
	Attempt(ctx context.Context, tenant string, id int64) (hooksubs.Attempt, error)
	ClaimTest(ctx context.Context, tenant string, id int64) (wait time.Duration, err error)
}

var _ subscriptionStore = (*hooksubs.Store)(nil)

// PathID is the subscription id in the path.
type PathID struct {
	ID int64 `path:"id" minimum:"1" doc:"Identifier of the subscription." example:"12"`
}

// Register adds the subscriptions operations to api.
func Register(api huma.API, d rest.Deps) {
	h := &handlers{d: d, policy: d.Outbound, secrets: d.Secrets, subs: hooksubs.New(d.DB)}
	area := rest.Area{Scope: "tamarack", Tags: []string{"Subscriptions"}}

	const subs, sub = "/v2/settings/subscriptions", "/v2/settings/subscriptions/{id}"
	rest.Register(api, area.Op("createSubscription", http.MethodPost, subs, http.StatusCreated, "Create a hook subscription",
		"Creates a Subscription of the caller's tenant. The target URL is checked against the SSRF policy (https; "+
			"a host resolving only to public addresses, unless the operator allows more). The answer carries the signing secret, "+
			"the only time it is shown. Each event is POSTed with the Standard Webhooks headers webhook-id, webhook-timestamp and webhook-signature. "+
			fmt.Sprintf("A tenant has at most %d subscriptions, active or not (each event is one delivery to every matching one): ", hooksubs.MaxPerTenant)+
			"one more is a 409 naming the body, and nothing is created; delete one first. Subscriptions a tenant had beyond the limit "+
			"before it was set are kept and keep receiving events.",
		http.StatusConflict),
		h.create)
	rest.Register(api, area.Op("getSubscriptions", http.MethodGet, subs, 0, "List hook subscriptions",
		"A page of the tenant's subscriptions, their urls and header values masked. Sort properties: id, url (by scheme, host and port only, the part answers show whole), active, createdAt, updatedAt (default id)."), h.list)
	// Before {id}, which would otherwise take the literal segment.
	rest.Register(api, area.Op("getEventTypes", http.MethodGet, subs+"/eventTypes", 0, "List event types",
		"A page of the event types tocsin emits, with an example payload each: the delivered "+
			"body, {type, timestamp, data}. The data of each type is the schema of the same name in the components, such as "+
			"AlertCreated for alert.created and RecipientResponded for alert.recipient.responded; every key is always present "+
			"(null when it does not apply). Sort property: name (default)."),
		h.eventTypes)
	rest.Register(api, area.Op("getSubscription", http.MethodGet, sub, 0, "Get a hook subscription", ""), h.get)
	rest.Register(api, area.Op("updateSubscription", http.MethodPut, sub, 0, "Replace a hook subscription",
		"Replaces url, eventTypes, active, description and headers; the signing secret stays. A masked url sent back unchanged (as getSubscription answered it) keeps the stored url; "+
			"any other url holding a mask is a 400 naming it. A masked header value "+
			"sent back unchanged (as getSubscription answered it) keeps the stored value while the url keeps its destination "+
			"(the same scheme, host, port, path and query parameters); when it changed, a masked value is a 400 naming the header, and the "+
			"value must be sent again. Setting active to true "+
			"re-enables a subscription that a 410 answer disabled."),
		h.update)
	rest.Register(api, area.Op("deleteSubscription", http.MethodDelete, sub, http.StatusNoContent, "Delete a hook subscription",
		"Deletes the subscription and its history; deliveries in progress stop before their next attempt."), h.delete)
	rest.Register(api, area.Op("getSubscriptionHistory", http.MethodGet, sub+"/history", 0, "Delivery history of a subscription",
		"A page of the delivery attempts of the last 30 days, newest first. Sort properties: requestedAt, attempt, "+
			"eventType, responseStatus, outcome (default -requestedAt)."),
		h.history)
	rest.Register(api, area.Op("getSubscriptionTest", http.MethodGet, sub+"/test", 0, "Send a test event now",
		"Sends one signed subscription.test event to the subscription (active or not) right away, without retries, "+
			"and answers with the attempt as recorded in the history, waiting for it up to TOCSIN_HOOK_TIMEOUT and 30 s more "+
			"(not cut short by TOCSIN_HTTP_REQUEST_TIMEOUT). HEAD is not served (405): it would send the event. "+
			fmt.Sprintf("A subscription is sent at most %d tests at once, then one every %d seconds: another sooner is a 429 with Retry-After, and sends nothing.",
				hooksubs.TestBurst, int(hooksubs.TestInterval.Seconds())), http.StatusTooManyRequests).WithoutHead().WithOwnDeadline(),
		h.test)

	api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(model.SubscriptionHistory{}), true, "")
	// The data of each event type, from the types the emitters use.
	for _, e := range hooks.Events {
		api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(e.Example), true, "")
	}
}

// checkBody validates what the JSON schema cannot: the target and the
// headers, and that no signing secret is given. A url sent back masked
// stands for storedURL, the subscription's (secrets.KeepURL; "" when none
// is stored).
func (h *handlers) checkBody(ctx context.Context, s *model.Subscription, storedURL string) error {
	if s.Secret != "" {
		return rest.Invalid("body", "secret", secretNotSettable, nil)
	}
	kept, err := secrets.KeepURL(s.URL, storedURL)
	if err != nil {
		return rest.Invalid("body", "url", err.Error(), nil)
	}
	u, err := h.policy.CheckURL(ctx, kept)
	if err != nil {
		return rest.Invalid("body", "url", strings.TrimPrefix(err.Error(), hooks.ErrTarget.Error()+": "), secrets.MaskURL(kept))
	}
	s.URL = u.String()
	if bad := hooks.CheckHeaders(s.Headers); len(bad) > 0 {
		failures := make([]rest.ValidationFailure, len(bad))
		for i, b := range bad {
			field := "headers"
			if b.Name != "" {
				field += "." + b.Name
			}
			failures[i] = rest.Failure("body", field, b.Err.Error(), nil)
		}
		return rest.Problem(http.StatusBadRequest, "validation failed", failures...)
	}
	if s.Headers == nil {
		s.Headers = map[string]string{}
	}
	seen := map[model.SubscribableEventType]bool{}
	for _, t := range s.EventTypes {
		if !hooks.KnownEvent(string(t)) {
			return rest.Invalid("body", "eventTypes", "unknown event type "+string(t), t)
		}
		if seen[t] {
			return rest.Invalid("body", "eventTypes", "event type listed twice", t)
		}
		seen[t] = true
	}
	slices.Sort(s.EventTypes)
	return nil
}

// secretNotSettable is why a request that gives a signing secret is refused.
const secretNotSettable = "the signing secret is generated by tocsin and shown once, in the answer of createSubscription; " +
	"it cannot be given or changed"

func notFound(err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return rest.NotFound("subscription")
	}
	return err
}
