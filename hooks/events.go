package hooks

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
)

// EventInfo describes one event type tocsin emits.
type EventInfo = events.Info

// Events is the catalogue of event types, in name order. The examples are
// values of the types in package events, which the emitters use too.
var Events = sortedEvents(events.Catalogue())

func sortedEvents(e []EventInfo) []EventInfo {
	slices.SortFunc(e, func(a, b EventInfo) int { return cmp.Compare(a.Name, b.Name) })
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

// Subscribable reports whether a subscription may list the event type name:
// every type tocsin emits but subscription.test, which only
// getSubscriptionTest sends, to the subscription it names.
func Subscribable(name string) bool {
	return KnownEvent(name) && name != storage.EventSubscriptionTest
}

// SubscribableNames lists the names of the event types a subscription may
// list, in order.
func SubscribableNames() []string {
	var out []string
	for _, e := range Events {
		if Subscribable(e.Name) {
			out = append(out, e.Name)
		}
	}
	return out
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
