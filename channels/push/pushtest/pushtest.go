// Package pushtest is a loopback push service for tests: it takes batches
// on POST /push/send like the real service, checks the bearer token and the
// shape of every notification, and answers one ticket per notification,
// refusing tokens marked unregistered.
package pushtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/channels/loopback"
	"github.com/tocsin/tocsin/channels/push"
)

// Server is the loopback push service.
type Server struct {
	*httptest.Server
	loopback.Recorder
	Token string

	mu           sync.Mutex
	unregistered map[string]bool
	received     []push.Notification
	batches      int
}

// New starts a loopback push service that wants token as bearer.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, unregistered: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Server.Close)
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
func (s *Server) Received() []push.Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]push.Notification(nil), s.received...)
}

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
	if r.Method != http.MethodPost || r.URL.Path != "/push/send" {
		s.Problem(w, http.StatusNotFound, "unexpected %s %s", r.Method, r.URL.Path)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		s.Problem(w, http.StatusUnauthorized, "bad Authorization header")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		s.Problem(w, http.StatusUnsupportedMediaType, "content type %q", r.Header.Get("Content-Type"))
		return
	}
	var batch []raw
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&batch); err != nil {
		s.Problem(w, http.StatusBadRequest, "body is not an array of notifications: %v", err)
		return
	}
	if len(batch) == 0 || len(batch) > push.MaxBatch {
		s.Problem(w, http.StatusBadRequest, "a batch holds 1 to %d notifications, not %d", push.MaxBatch, len(batch))
		return
	}
	s.mu.Lock()
	fail := s.Failure()
	s.mu.Unlock()
	if fail != 0 {
		http.Error(w, "scripted failure", fail)
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
		if !gone {
			s.received = append(s.received, n.Notification)
		}
		id := fmt.Sprintf("ticket-%d", len(s.received))
		s.mu.Unlock()
		if gone {
			t := push.Ticket{Status: "error", Message: "the device token is not registered"}
			t.Details = &struct {
				Error string `json:"error"`
			}{Error: push.ErrDeviceNotRegistered}
			tickets[i] = t
			continue
		}
		tickets[i] = push.Ticket{Status: "ok", ID: id}
	}
	s.mu.Lock()
	s.batches++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(push.Response{Data: tickets})
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
