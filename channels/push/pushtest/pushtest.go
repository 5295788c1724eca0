// Package pushtest is a loopback push service for tests: it takes batches
// on POST /push/send like the real service, checks the bearer token and the
// shape of every notification, and answers one ticket per notification,
// refusing tokens marked unregistered.
package pushtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/channels/loopback"
	"github.com/tocsin/tocsin/channels/push"
)

// Server is the loopback push service.
type Server struct {
	loopback.Server[push.Notification]
	Token string

	mu           sync.Mutex
	unregistered map[string]bool
	batches      int
}

// New starts a loopback push service that wants token as bearer.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, unregistered: map[string]bool{}}
	s.Serve(t, s.handle)
	return s
}

// Unregister makes the service answer DeviceNotRegistered for tokens.
func (s *Server) Unregister(tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tokens {
		s.unregistered[t] = true
	}
}

// Received returns the notifications accepted.
func (s *Server) Received() []push.Notification { return s.All() }

// Batches counts the requests answered with tickets.
func (s *Server) Batches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches
}

// raw keeps sound undecoded so its two shapes can be checked.
type raw struct {
	push.Notification
	Sound json.RawMessage `json:"sound"`
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	var batch []raw
	if !s.Post(w, r, "/push/send") || !s.Authorized(w, r, s.Token) || !s.DecodeJSON(w, r, &batch) {
		return
	}
	if len(batch) == 0 || len(batch) > push.MaxBatch {
		s.Problem(w, http.StatusBadRequest, "a batch holds 1 to %d notifications, not %d", push.MaxBatch, len(batch))
		return
	}
	if s.Failing(w) {
		return
	}
	tickets := make([]push.Ticket, len(batch))
	for i, n := range batch {
		if msg := check(&n); msg != "" {
			s.Problem(w, http.StatusBadRequest, "notification %d: %s", i, msg)
			return
		}
		s.mu.Lock()
		gone := s.unregistered[n.To]
		s.mu.Unlock()
		if gone {
			t := push.Ticket{Status: "error", Message: "the device token is not registered"}
			t.Details = &struct {
				Error string `json:"error"`
			}{Error: push.ErrDeviceNotRegistered}
			tickets[i] = t
			continue
		}
		var id string
		s.Add("", func(k int) push.Notification { id = fmt.Sprintf("ticket-%d", k); return n.Notification })
		tickets[i] = push.Ticket{Status: "ok", ID: id}
	}
	s.mu.Lock()
	s.batches++
	s.mu.Unlock()
	loopback.WriteJSON(w, http.StatusOK, push.Response{Data: tickets})
}

func check(n *raw) string {
	switch {
	case n.To == "":
		return "to is empty"
	case n.Body == "":
		return "body is empty"
	case n.Priority != "normal" && n.Priority != "high":
		return "priority " + n.Priority
	case n.ChannelID != "alerts" && n.ChannelID != "emergency":
		return "channelId " + n.ChannelID
	}
	var name string
	var crit push.CriticalSound
	switch {
	case json.Unmarshal(n.Sound, &name) == nil:
		if name != "default" {
			return "sound " + name
		}
		n.Notification.Sound = name
		if n.InterruptionLevel == "critical" {
			return "a critical notification needs the critical sound"
		}
	case json.Unmarshal(n.Sound, &crit) == nil:
		if !crit.Critical || crit.Name == "" || crit.Volume <= 0 || crit.Volume > 1 {
			return "bad critical sound"
		}
		if n.Priority != "high" || n.InterruptionLevel != "critical" {
			return "a critical sound needs high priority and the critical interruption level"
		}
		n.Notification.Sound = crit
	default:
		return "sound is neither a name nor a critical sound"
	}
	switch n.InterruptionLevel {
	case "active", "time-sensitive", "critical":
	default:
		return "interruptionLevel " + n.InterruptionLevel
	}
	return ""
}
