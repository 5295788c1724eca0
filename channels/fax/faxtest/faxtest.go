// Package faxtest is a loopback fax provider for tests: it takes multipart
// fax uploads on POST /faxes, checks the bearer token, the fields and the
// document, and keeps what it received.
package faxtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/channels/loopback"
)

// Fax is a fax the server accepted.
type Fax struct {
	ID, To, From, Reference string
	Filename, ContentType   string
	Document                []byte
	CoverPage               bool
}

// Server is the loopback fax provider.
type Server struct {
	*httptest.Server
	loopback.Recorder
	Token string

	mu    sync.Mutex
	faxes []Fax
	byKey map[string]string
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// New starts a loopback fax provider that wants token as bearer.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, byKey: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Server.Close)
	return s
}

// Faxes returns the faxes accepted.
func (s *Server) Faxes() []Fax {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Fax(nil), s.faxes...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/faxes" {
		s.Problem(w, http.StatusNotFound, "unexpected %s %s", r.Method, r.URL.Path)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		s.Problem(w, http.StatusUnauthorized, "bad Authorization header")
		return
	}
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		s.Problem(w, http.StatusBadRequest, "not a multipart form: %v", err)
		return
	}
	f := Fax{To: r.FormValue("to"), From: r.FormValue("from"), Reference: r.FormValue("reference"), CoverPage: r.FormValue("coverPage") == "true"}
	switch {
	case !e164.MatchString(f.To):
		s.Problem(w, http.StatusBadRequest, "to %q is not an E.164 number", f.To)
		return
	case f.From == "" || f.Reference == "":
		s.Problem(w, http.StatusBadRequest, "from and reference are required")
		return
	case r.Header.Get("Idempotency-Key") != f.Reference:
		s.Problem(w, http.StatusBadRequest, "Idempotency-Key is not the reference")
		return
	}
	file, hdr, err := r.FormFile("document")
	if err != nil {
		s.Problem(w, http.StatusBadRequest, "no document part: %v", err)
		return
	}
	defer file.Close()
	f.Filename, f.ContentType = hdr.Filename, hdr.Header.Get("Content-Type")
	f.Document, _ = io.ReadAll(file)
	if !slices.Contains(fax.Accepted, f.ContentType) || len(f.Document) == 0 || f.Filename == "" {
		s.Problem(w, http.StatusUnsupportedMediaType, "document %q of type %q, %d bytes", f.Filename, f.ContentType, len(f.Document))
		return
	}
	s.mu.Lock()
	if s.Failure() != 0 {
		st := s.Failure()
		s.mu.Unlock()
		http.Error(w, "scripted failure", st)
		return
	}
	id, dup := s.byKey[f.Reference]
	if !dup {
		id = fmt.Sprintf("fax-%d", len(s.faxes)+1)
		f.ID = id
		s.byKey[f.Reference] = id
		s.faxes = append(s.faxes, f)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(fax.Response{FaxID: id, Status: "queued"})
}
