package model

import (
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks"
)

// EventTypeName names an event type tocsin emits to hook subscriptions.
type EventTypeName string

// Schema implements huma.SchemaProvider.
func (EventTypeName) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[EventTypeName](r, "The name of an event type; getEventTypes describes each.", valuesAs[EventTypeName](hooks.EventNames())...)
}

// SubscribableEventType names an event type a subscription may list: every
// EventTypeName but subscription.test.
type SubscribableEventType string

// Schema implements huma.SchemaProvider.
func (SubscribableEventType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[SubscribableEventType](r, "The name of an event type a subscription may list; getEventTypes describes each. "+
		"subscription.test is not one: getSubscriptionTest sends it to the subscription it names, whatever its event types.",
		valuesAs[SubscribableEventType](hooks.SubscribableNames())...)
}

// HookDeliveryOutcome is what became of one hook delivery attempt.
type HookDeliveryOutcome string

// Schema implements huma.SchemaProvider.
func (HookDeliveryOutcome) Schema(r huma.Registry) *huma.Schema {
	names := make([]string, len(hooks.Outcomes))
	for i, o := range hooks.Outcomes {
		names[i] = string(o)
	}
	return EnumSchema[HookDeliveryOutcome](r,
		"Delivered: the target answered 2xx. Failed: no 2xx (network error, timeout, 3xx, 4xx, 5xx), or not sent because the signing secret or the custom headers cannot be decrypted (the error says which); retried while the schedule lasts. Gone: the target answered 410 and the subscription was disabled. Refused: the target's address is loopback, private, link-local or otherwise reserved and not allowed (SSRF protection); retried like a failure.",
		valuesAs[HookDeliveryOutcome](hooks.Outcomes)...)
}

// Subscription is a hook: tocsin POSTs the tenant's events of the chosen
// types to url, signed per the Standard Webhooks specification.
type Subscription struct {
	ID                int64                   `json:"id" readOnly:"true" doc:"Identifier of the subscription." example:"12"`
	URL               string                  `json:"url" format:"uri" minLength:"8" maxLength:"2048" doc:"Where events are POSTed. https, and a host that resolves to public addresses only, unless the operator allows more (TOCSIN_HOOK_ALLOW_HTTP, TOCSIN_HOOK_ALLOW_HOSTS). The host is an IP address or a valid DNS name (RFC 1123 labels; an internationalized name is read by IDNA's lookup rules and stored in its ASCII form). A user and password are refused (use headers). Answered masked, since the path or the query often holds the receiver's credentials: the scheme, host, port and the names of query values stay, and each path segment, query value (a query item without a value whole) and the fragment is \"****\" and at most its last four characters. In updateSubscription a masked url sent back unchanged keeps the stored one; any other url holding a mask is a 400 naming it." example:"https://hooks.example.com/tocsin"`
	EventTypes        []SubscribableEventType `json:"eventTypes" minItems:"1" maxItems:"20" uniqueItems:"true" doc:"The event types delivered to this subscription."`
	Active            *bool                   `json:"active" required:"false" default:"true" doc:"Only active subscriptions receive events. Defaults to true on creation; a 410 answer sets it to false."`
	Description       string                  `json:"description,omitempty" maxLength:"500" doc:"What the subscription is for." example:"Incident dashboard"`
	Headers           map[string]string       `json:"headers,omitempty" maxProperties:"20" doc:"Extra headers sent with every delivery (for example an API key of the receiver). At most 20; the webhook-*, Content-Type, Host and other hop-by-hop headers are reserved, and names are case-insensitive (X-A and x-a together are refused). Values are stored encrypted (AES-256-GCM) and answered masked: \"****\" and at most their last four characters. Values hold visible ASCII characters, spaces and tabs only (RFC 9110). In updateSubscription a masked value sent back unchanged keeps the stored value while the url keeps its destination (the same scheme, host, port, path and query parameters); one that matches nothing stored, or whose url moved elsewhere, is refused and must be sent again. Absent, with headersUnreadable true, when the stored values cannot be decrypted." example:"{\"Authorization\":\"Bearer 4f9c2a7e1b8d\"}"`
	HeadersUnreadable bool                    `json:"headersUnreadable,omitempty" readOnly:"true" doc:"True when the stored custom header values cannot be decrypted (TOCSIN_SECRETS_KEY was changed, or the stored value is damaged): headers is then absent, and every delivery fails without being sent, recorded in the history with the reason. Sending every header value again in full with updateSubscription (or none) repairs them; a masked value is then refused. Absent otherwise."`
	Secret            string                  `json:"secret,omitempty" readOnly:"true" doc:"The signing secret (whsec_ and base64), returned once, in the answer of createSubscription. Verify the webhook-signature header with it. tocsin generates it: a request that gives one is refused (400)." example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
	// DisabledReason says why tocsin deactivated the subscription.
	DisabledReason string     `json:"disabledReason,omitempty" readOnly:"true" doc:"Why tocsin deactivated the subscription (a 410 answer), empty otherwise." example:"the target answered 410 Gone"`
	DisabledAt     *time.Time `json:"disabledAt,omitempty" readOnly:"true" doc:"When tocsin deactivated the subscription."`
	CreatedAt      time.Time  `json:"createdAt" readOnly:"true" doc:"When the subscription was created."`
	UpdatedAt      time.Time  `json:"updatedAt" readOnly:"true" doc:"When the subscription was last changed."`
}

// PagedSubscriptionResponse is a page of subscriptions.
type PagedSubscriptionResponse struct {
	rest.Paging
	Items []Subscription `json:"items" doc:"The subscriptions of this page."`
}

// SubscriptionHistory is one delivery attempt of an event to a subscription.
type SubscriptionHistory struct {
	ID             int64               `json:"id" doc:"Identifier of the attempt." example:"981"`
	SubscriptionID int64               `json:"subscriptionId" doc:"The subscription." example:"12"`
	EventID        string              `json:"eventId" doc:"The event, also sent as the webhook-id header; the same on every attempt, so receivers can deduplicate." example:"evt_0f8fad5b-d9cb-469f-a165-70867728950e"`
	EventType      EventTypeName       `json:"eventType"`
	Attempt        int                 `json:"attempt" minimum:"1" doc:"1 for the first attempt, then counting retries." example:"1"`
	RequestedAt    time.Time           `json:"requestedAt" doc:"When the request was sent."`
	ResponseStatus int                 `json:"responseStatus,omitempty" doc:"The HTTP status of the answer; absent when none came (network error, timeout, refused)." example:"200"`
	LatencyMs      int64               `json:"latencyMs" doc:"Time from sending the request to the answer (or the failure), in milliseconds." example:"84"`
	Outcome        HookDeliveryOutcome `json:"outcome"`
	Error          string              `json:"error,omitempty" doc:"What went wrong, for attempts that did not deliver." example:"HTTP 503: busy"`
	NextRetryAt    *time.Time          `json:"nextRetryAt,omitempty" doc:"When the next attempt is due; absent after a delivery, a 410 or the last attempt."`
}

// PagedSubscriptionHistoryResponse is a page of delivery attempts.
type PagedSubscriptionHistoryResponse struct {
	rest.Paging
	Items []SubscriptionHistory `json:"items" doc:"The attempts of this page."`
}

// EventType describes one kind of event a subscription can receive.
type EventType struct {
	Name           EventTypeName  `json:"name"`
	Description    string         `json:"description" doc:"When the event is emitted." example:"A file (image or audio) was stored, with its encoded versions."`
	ExamplePayload map[string]any `json:"examplePayload" doc:"An example of the JSON body delivered for this event: type, timestamp (when the event happened) and data."`
}

// PagedEventTypeResponse is a page of event types.
type PagedEventTypeResponse struct {
	rest.Paging
	Items []EventType `json:"items" doc:"The event types of this page."`
}
