// Package loopback holds what the providers' loopback counterparts (the
// test servers next to each channel) share: the HTTP test server, the
// record of what was wrong with the requests they received, a switch that
// makes them fail every request with a given status, the checks every
// provider makes of a request, and the log of what they accepted.
package loopback

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server is a loopback provider accepting Ts: the HTTP test server, its
// Recorder and the Log of what it accepted. Embed it and Serve.
type Server[T any] struct {
	*httptest.Server
	Recorder
	Log[T]
}

// Serve starts the server with handler h; it closes when the test ends.
func (s *Server[T]) Serve(t testing.TB, h http.HandlerFunc) {
	s.Server = httptest.NewServer(h)
	t.Cleanup(s.Server.Close)
}

// Recorder records problems and holds the scripted failure. Its zero value
// is ready to use; embed it in a loopback server.
type Recorder struct {
	mu       sync.Mutex
	problems []string
	failWith int
}

// FailWith makes every request answer status (0: accept again).
func (r *Recorder) FailWith(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failWith = status
}

// Failure is the scripted failure status (0: none).
func (r *Recorder) Failure() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failWith
}

// Failing answers the scripted failure, when there is one, and reports
// whether it did.
func (r *Recorder) Failing(w http.ResponseWriter) bool {
	status := r.Failure()
	if status != 0 {
		http.Error(w, "scripted failure", status)
	}
	return status != 0
}

// Problems lists what was wrong with the requests received.
func (r *Recorder) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.problems...)
}

// Note records a problem and returns its text.
func (r *Recorder) Note(format string, args ...any) string {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.problems = append(r.problems, msg)
	r.mu.Unlock()
	return msg
}

// Problem records a problem and answers it with status.
func (r *Recorder) Problem(w http.ResponseWriter, status int, format string, args ...any) {
	http.Error(w, r.Note(format, args...), status)
}

// Post reports whether req is a POST to path; it answers 404 when not.
func (r *Recorder) Post(w http.ResponseWriter, req *http.Request, path string) bool {
	if req.Method != http.MethodPost || req.URL.Path != path {
		r.Problem(w, http.StatusNotFound, "unexpected %s %s", req.Method, req.URL.Path)
		return false
	}
	return true
}

// Authorized reports whether req carries token as its bearer token; it
// answers 401 when not.
func (r *Recorder) Authorized(w http.ResponseWriter, req *http.Request, token string) bool {
	if req.Header.Get("Authorization") != "Bearer "+token {
		r.Problem(w, http.StatusUnauthorized, "bad Authorization header")
		return false
	}
	return true
}

// DecodeJSON decodes req's JSON body into v, refusing fields v does not
// have, and reports whether it could; it answers 415 for another content
// type and 400 for a body that does not decode.
func (r *Recorder) DecodeJSON(w http.ResponseWriter, req *http.Request, v any) bool {
	if ct := req.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		r.Problem(w, http.StatusUnsupportedMediaType, "content type %q", ct)
		return false
	}
	dec := json.NewDecoder(req.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		r.Problem(w, http.StatusBadRequest, "body: %v", err)
		return false
	}
	return true
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Log is what a loopback server accepted, in order. Its zero value is
// ready to use.
type Log[T any] struct {
	mu    sync.Mutex
	items []T
	keys  map[string]int
}

// Add appends the item build makes from its number (1 for the first)
// and returns it, unless an item was added with the same idempotency key
// before: then it returns that one with dup set. An empty key never
// matches.
func (l *Log[T]) Add(key string, build func(n int) T) (item T, dup bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.keys[key]; ok && key != "" {
		return l.items[i], true
	}
	item = build(len(l.items) + 1)
	if key != "" {
		if l.keys == nil {
			l.keys = map[string]int{}
		}
		l.keys[key] = len(l.items)
	}
	l.items = append(l.items, item)
	return item, false
}

// All returns what was accepted, in order.
func (l *Log[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}
