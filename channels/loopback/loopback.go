// Package loopback holds what the providers' loopback counterparts (the
// test servers next to each channel) share: the record of what was wrong
// with the requests they received and a switch that makes them fail every
// request with a given status.
package loopback

import (
	"fmt"
	"net/http"
	"sync"
)

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
