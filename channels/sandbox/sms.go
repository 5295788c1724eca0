package sandbox

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Text is one message the text-message endpoint received.
type Text struct {
	ID   string `json:"id"`
	To   string `json:"to"`
	Body string `json:"body"`
	// From is the number the text asked to be sent from ("" when none).
	From           string    `json:"from,omitempty"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Tenant         string    `json:"tenant"`
	ReceivedAt     time.Time `json:"receivedAt"`
}

// SMSServer is a loopback text-message provider speaking tocsin's HTTP
// provider protocol (see the README): POST JSON {"to","body","from",
// "idempotencyKey","tenant"} ("from" optional) with a bearer token, answer {"id": "..."}.
// A repeated idempotency key answers the first message's id and is not
// stored again.
type SMSServer struct {
	srv   *http.Server
	ln    net.Listener
	path  string
	token string
	box   mailbox[Text]
	seq   atomic.Int64

	mu        sync.Mutex
	byKey     map[string]string
	responses map[string]int
}

// StartSMS listens on addr ("127.0.0.1:0" picks a free port) and accepts
// messages at path. An empty token accepts any bearer token; otherwise
// requests must carry exactly "Authorization: Bearer <token>".
func StartSMS(addr, path, token string) (*SMSServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sandbox sms listen %s: %w", addr, err)
	}
	if path == "" {
		path = "/messages"
	}
	s := &SMSServer{ln: ln, path: path, token: token, box: newMailbox[Text](),
		byKey: map[string]string{}, responses: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, s.receive)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the endpoint senders post to.
func (s *SMSServer) URL() string { return "http://" + s.ln.Addr().String() + s.path }

// Close stops the server.
func (s *SMSServer) Close() error { return s.srv.Close() }

// Respond makes the endpoint answer messages to the number to with the HTTP
// status code instead of accepting them (429, 500 or 400, say). Code 0
// removes the rule.
func (s *SMSServer) Respond(to string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == 0 {
		delete(s.responses, to)
		return
	}
	s.responses[to] = code
}

// Messages returns every text received so far, oldest first.
func (s *SMSServer) Messages() []Text { return s.box.all() }

// Clear forgets the received texts.
func (s *SMSServer) Clear() { s.box.clear() }

// WaitFor returns the first received text (already or in the future) for
// which match is true, or an error when ctx ends first.
func (s *SMSServer) WaitFor(ctx context.Context, match func(Text) bool) (Text, error) {
	return s.box.waitFor(ctx, match)
}

// WaitTo waits for a text to the number to.
func (s *SMSServer) WaitTo(ctx context.Context, to string) (Text, error) {
	return s.WaitFor(ctx, func(m Text) bool { return m.To == to })
}

type smsError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *SMSServer) receive(w http.ResponseWriter, r *http.Request) {
	if s.token != "" {
		want := "Bearer " + s.token
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
			writeJSON(w, http.StatusUnauthorized, smsError{"bad or missing bearer token"})
			return
		}
	}
	var in struct {
		To             string `json:"to"`
		Body           string `json:"body"`
		From           string `json:"from"`
		IdempotencyKey string `json:"idempotencyKey"`
		Tenant         string `json:"tenant"`
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSON(w, http.StatusRequestEntityTooLarge, smsError{"body too large"})
			return
		}
		writeJSON(w, http.StatusBadRequest, smsError{"body is not JSON: " + err.Error()})
		return
	}
	if in.To == "" || in.Body == "" {
		writeJSON(w, http.StatusBadRequest, smsError{"to and body are required"})
		return
	}
	if h := r.Header.Get("Idempotency-Key"); h != "" && in.IdempotencyKey == "" {
		in.IdempotencyKey = h
	}
	s.mu.Lock()
	if code, ok := s.responses[in.To]; ok {
		s.mu.Unlock()
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, code, smsError{"refused by the sandbox"})
		return
	}
	if id, ok := s.byKey[in.IdempotencyKey]; ok && in.IdempotencyKey != "" {
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
		return
	}
	id := "sms_" + strconv.FormatInt(s.seq.Add(1), 10)
	if in.IdempotencyKey != "" {
		s.byKey[in.IdempotencyKey] = id
	}
	s.mu.Unlock()
	s.box.add(Text{ID: id, To: in.To, Body: in.Body, From: in.From, IdempotencyKey: in.IdempotencyKey, Tenant: in.Tenant, ReceivedAt: time.Now().UTC()})
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id})
}
