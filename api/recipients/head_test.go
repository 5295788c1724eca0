package recipients_test

import (
	"net/http"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// HEAD is safe: on a short link it would count a click (mail scanners and
// link checkers send HEAD), and the export streams its answer, so neither
// serves it; the connection stays usable for the next request.
func TestHeadIsRefusedWhereItWouldActOrStream(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	_, first := shorten(t, s, tok, map[string]any{"url": "https://alerts.example.com/head"})
	for _, path := range []string{"/s/" + first.ShortenedUrl.Code, "/v2/contacts/export"} {
		if r := s.Do(t, http.MethodHead, path, tok, nil); r.Status != http.StatusMethodNotAllowed || len(r.Body) != 0 {
			t.Errorf("HEAD %s: %d %q", path, r.Status, r.Body)
		}
		if r := s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil); r.Status != http.StatusOK {
			t.Errorf("GET after HEAD %s: %d %s", path, r.Status, r.Body)
		}
	}
	if _, again := shorten(t, s, tok, map[string]any{"url": "https://alerts.example.com/head"}); again.ShortenedUrl.Clicks != 0 {
		t.Fatalf("a HEAD counted %d clicks", again.ShortenedUrl.Clicks)
	}
}
