// Package voicetest is a loopback voice provider for tests: it speaks the
// provider side of the voice protocol over HTTP, checks every call request
// it receives (bearer token, idempotency key, payload shape) and reports each
// call's outcome to the request's status callback, signed like a real
// provider would.
package voicetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels/loopback"
	"github.com/tocsin/tocsin/channels/voice"
)

// Outcome is what happens to one call attempt.
type Outcome struct {
	// Status is answered, busy, no-answer or failed.
	Status     string
	AnsweredBy string
	Digits     string
	// Hold is how long the call lasts before its callback is sent.
	Hold time.Duration
}

// Call is a call request the server accepted.
type Call struct {
	ID             string
	IdempotencyKey string
	Request        voice.CallRequest
	Received       time.Time
}

// Server is the loopback provider.
type Server struct {
	loopback.Server[Call]
	Token, SigningSecret string

	mu sync.Mutex
	// Script maps a number to the outcomes of its attempts in order; the
	// last one repeats. Numbers without a script are answered by a human.
	script    map[string][]Outcome
	attempts  map[string]int
	active    int
	maxActive int
	callbacks int
	cbErrors  []string
	wg        sync.WaitGroup
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// New starts a loopback provider that wants token as bearer and signs
// callbacks with signingSecret.
func New(t testing.TB, token, signingSecret string) *Server {
	s := &Server{Token: token, SigningSecret: signingSecret, script: map[string][]Outcome{}, attempts: map[string]int{}}
	s.Serve(t, s.handle)
	// Cleanups run last first: the callbacks in flight end before the
	// server closes.
	t.Cleanup(s.wg.Wait)
	return s
}

// Script sets the outcomes of the calls to number.
func (s *Server) Script(number string, outcomes ...Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script[number] = outcomes
}

// Calls returns the accepted call requests.
func (s *Server) Calls() []Call { return s.All() }

// MaxActive is the most calls that were in progress at once: accepted and
// not yet ended by their final callback.
func (s *Server) MaxActive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxActive
}

// Callbacks counts callbacks delivered with a 2xx answer; CallbackErrors
// lists the others.
func (s *Server) Callbacks() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callbacks, append([]string(nil), s.cbErrors...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if !s.Post(w, r, "/calls") || !s.Authorized(w, r, s.Token) {
		return
	}
	key := r.Header.Get("Idempotency-Key")
	var req voice.CallRequest
	if !s.DecodeJSON(w, r, &req) {
		return
	}
	if key == "" {
		s.Problem(w, http.StatusBadRequest, "no Idempotency-Key")
		return
	}
	if msg := check(req); msg != "" {
		s.Problem(w, http.StatusBadRequest, "%s", msg)
		return
	}
	if s.Failing(w) {
		return
	}
	c, dup := s.Add(key, func(n int) Call {
		return Call{ID: fmt.Sprintf("call-%d", n), IdempotencyKey: key, Request: req, Received: time.Now()}
	})
	if dup {
		loopback.WriteJSON(w, http.StatusOK, voice.CallResponse{CallID: c.ID, Status: "queued"})
		return
	}
	s.mu.Lock()
	n := s.attempts[req.To]
	s.attempts[req.To] = n + 1
	out := Outcome{Status: voice.CallbackAnswered, AnsweredBy: "human"}
	if sc := s.script[req.To]; len(sc) > 0 {
		out = sc[min(n, len(sc)-1)]
	}
	s.active++
	s.maxActive = max(s.maxActive, s.active)
	s.wg.Add(1)
	s.mu.Unlock()
	go s.finish(c.ID, req, out)
	loopback.WriteJSON(w, http.StatusCreated, voice.CallResponse{CallID: c.ID, Status: "queued"})
}

func check(req voice.CallRequest) string {
	switch {
	case !e164.MatchString(req.To):
		return "to is not an E.164 number: " + req.To
	case req.From == "":
		return "from is empty"
	case (req.Say == nil) == (req.Play == nil):
		return "exactly one of say and play is required"
	case req.Say != nil && (req.Say.Text == "" || req.Say.Language == ""):
		return "say needs text and language"
	case req.Play != nil && !absolute(req.Play.URL):
		return "play.url is not an absolute URL"
	case req.Repeat < 1 || req.Repeat > 10:
		return "repeat out of 1-10"
	case req.MachineDetection != voice.LeaveMessage && req.MachineDetection != voice.HangUp && req.MachineDetection != voice.PlayImmediately:
		return "machineDetection " + req.MachineDetection
	case req.Gather != nil && req.Gather.Digits != 1:
		return "gather.digits must be 1"
	case !absolute(req.StatusCallback):
		return "statusCallback is not an absolute URL"
	case req.Reference == "":
		return "reference is empty"
	}
	return ""
}

func absolute(u string) bool {
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

func (s *Server) finish(id string, req voice.CallRequest, out Outcome) {
	defer s.wg.Done()
	if out.Hold > 0 {
		time.Sleep(out.Hold)
	}
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
	cb := voice.Callback{CallID: id, Reference: req.Reference, Status: out.Status, AnsweredBy: out.AnsweredBy, Digits: out.Digits}
	if out.Status == voice.CallbackAnswered {
		cb.DurationSeconds = 20
	}
	body, _ := json.Marshal(cb)
	var last string
	for try := 0; try < 5; try++ {
		hr, _ := http.NewRequest(http.MethodPost, req.StatusCallback, bytes.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set(voice.SignatureHeader, voice.Sign(s.SigningSecret, body, time.Now()))
		res, err := http.DefaultClient.Do(hr)
		if err == nil {
			res.Body.Close()
			if res.StatusCode/100 == 2 {
				s.mu.Lock()
				s.callbacks++
				s.mu.Unlock()
				return
			}
			last = fmt.Sprintf("callback %s answered %d", id, res.StatusCode)
			if res.StatusCode < 500 {
				break
			}
		} else {
			last = err.Error()
		}
		time.Sleep(time.Duration(try+1) * 100 * time.Millisecond)
	}
	s.mu.Lock()
	s.cbErrors = append(s.cbErrors, last)
	s.mu.Unlock()
}
