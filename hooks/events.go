package hooks

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/tocsin/tocsin/storage"
)

// EventInfo describes one event type tocsin emits.
type EventInfo struct {
	Name        string
	Description string
	// Example is an example of the data member of the delivered payload.
	Example map[string]any
}

// Events is the catalogue of event types, in name order.
var Events = sortedEvents([]EventInfo{
	{storage.EventAlertCreated, "An alert was created (by a send, a bulk send or an attachment upload).",
		map[string]any{"alertId": 4711, "subject": "Water main break on Elm St", "alertType": "Default", "priority": "Emergency", "createdBy": "dispatcher-7"}},
	{storage.EventAlertQueued, "An alert was queued for delivery; its recipients are resolved.",
		map[string]any{"alertId": 4711, "recipients": 1250, "channels": []string{"email", "text", "voice"}}},
	{storage.EventAlertSent, "Every delivery of an alert was handed to its providers.",
		map[string]any{"alertId": 4711, "sent": 1248, "failed": 2}},
	{storage.EventAlertCompleted, "An alert reached its final state: every delivery has a result.",
		map[string]any{"alertId": 4711, "status": "Sent", "delivered": 1240, "failed": 10}},
	{storage.EventAlertFailed, "An alert failed as a whole and was not delivered.",
		map[string]any{"alertId": 4711, "status": "Failed", "reason": "no recipient could be resolved"}},
	{storage.EventRecipientResponded, "A recipient answered an alert: a poll option or a confirmation.",
		map[string]any{"alertId": 4711, "recipientId": 88, "channel": "text", "pollOptionId": 2, "response": "I am safe", "respondedAt": "2026-03-01T12:05:00Z"}},
	{storage.EventVerificationDone, "An email address or phone number was verified with its code.",
		map[string]any{"userId": "u-123", "address": "ada@example.com", "channel": "email"}},
	{storage.EventVerificationFailed, "A verification code expired or its attempts were used up.",
		map[string]any{"userId": "u-123", "address": "+15551234567", "channel": "phone", "reason": "expired"}},
	{storage.EventFileUploaded, "A file (image or audio) was stored, with its encoded versions.",
		map[string]any{"fileName": "sirens/tornado.wav", "kind": "audio", "contentType": "audio/wav", "sizeBytes": 882044, "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "assets": []string{"original", "voice"}}},
	{storage.EventFileDeleted, "A file and all its stored versions were deleted.",
		map[string]any{"fileName": "sirens/tornado.wav", "kind": "audio"}},
	{storage.EventSubscriptionTest, "A test event, sent only to the subscription named in a test request (getSubscriptionTest).",
		map[string]any{"subscriptionId": 12, "message": "This is a test event from tocsin."}},
})

func sortedEvents(e []EventInfo) []EventInfo {
	slices.SortFunc(e, func(a, b EventInfo) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return e
}

// EventNames lists the names of every event type, in order.
func EventNames() []string {
	out := make([]string, len(Events))
	for i, e := range Events {
		out[i] = e.Name
	}
	return out
}

// KnownEvent reports whether name is an event type tocsin emits.
func KnownEvent(name string) bool {
	return slices.ContainsFunc(Events, func(e EventInfo) bool { return e.Name == name })
}

// Envelope is the JSON body of every delivery, as the Standard Webhooks
// specification lays it out.
type Envelope struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Body encodes the payload of an event.
func Body(typ string, at time.Time, data json.RawMessage) ([]byte, error) {
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return json.Marshal(Envelope{Type: typ, Timestamp: at.UTC(), Data: data})
}
