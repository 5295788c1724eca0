// Package faxtest is a loopback fax provider for tests: it takes multipart
// fax uploads on POST /faxes, checks the bearer token, the fields and the
// document, and keeps what it received.
package faxtest

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
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
	loopback.Server[Fax]
	Token string
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// New starts a loopback fax provider that wants token as bearer.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token}
	s.Serve(t, s.handle)
	return s
}

// Faxes returns the faxes accepted.
func (s *Server) Faxes() []Fax { return s.All() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if !s.Post(w, r, "/faxes") || !s.Authorized(w, r, s.Token) {
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
	if s.Failing(w) {
		return
	}
	f, _ = s.Add(f.Reference, func(n int) Fax { f.ID = fmt.Sprintf("fax-%d", n); return f })
	loopback.WriteJSON(w, http.StatusAccepted, fax.Response{FaxID: f.ID, Status: "queued"})
}
