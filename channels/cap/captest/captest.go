// Package captest is a loopback CAP endpoint for tests: it takes CAP 1.2
// documents over HTTP like an alert aggregator, checks the bearer token,
// content type and document, and keeps what it received. Validate checks a
// document against the OASIS CAP 1.2 schema with xmllint.
package captest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/loopback"
)

// Server is the loopback CAP endpoint.
type Server struct {
	loopback.Server[[]byte]
	Token string
}

// New starts a loopback CAP endpoint that wants token as bearer.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token}
	s.Serve(t, s.handle)
	return s
}

// Documents returns the documents accepted, in order.
func (s *Server) Documents() [][]byte { return s.All() }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.Problem(w, http.StatusMethodNotAllowed, "method %s", r.Method)
		return
	}
	if !s.Authorized(w, r, s.Token) {
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") && !strings.HasPrefix(ct, "application/cap+xml") {
		s.Problem(w, http.StatusUnsupportedMediaType, "content type %q", ct)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var root struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(body, &root); err != nil || root.XMLName.Space != cap.Namespace || root.XMLName.Local != "alert" {
		s.Problem(w, http.StatusBadRequest, "not a CAP 1.2 alert: %v %v", root.XMLName, err)
		return
	}
	a, err := cap.Parse(body)
	if err != nil || a.Identifier == "" || a.Sender == "" || a.Sent == "" {
		s.Problem(w, http.StatusBadRequest, "incomplete CAP alert: %v", err)
		return
	}
	if r.Header.Get("Idempotency-Key") != a.Identifier {
		s.Problem(w, http.StatusBadRequest, "Idempotency-Key %q is not the identifier", r.Header.Get("Idempotency-Key"))
		return
	}
	if s.Failing(w) {
		return
	}
	s.Add(a.Identifier, func(int) []byte { return body })
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><ack><identifier>%s</identifier><status>accepted</status></ack>`, a.Identifier)
}

// SchemaPath is the copy of the OASIS CAP 1.2 schema in the repository.
func SchemaPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "CAP-v1.2.xsd")
}

// Validate checks doc against the CAP 1.2 schema with xmllint (Debian
// package libxml2-utils, which `make test` installs) and returns its
// complaints.
func Validate(t testing.TB, doc []byte) error {
	t.Helper()
	if _, err := exec.LookPath("xmllint"); err != nil {
		if testing.Short() {
			t.Skip("xmllint is not installed (apt-get install libxml2-utils)")
		}
		t.Fatal("xmllint is not installed: run make test, or apt-get install libxml2-utils")
	}
	f, err := os.CreateTemp(t.TempDir(), "cap-*.xml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(doc); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	var out bytes.Buffer
	cmd := exec.Command("xmllint", "--noout", "--schema", SchemaPath(), f.Name())
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, out.String())
	}
	return nil
}
