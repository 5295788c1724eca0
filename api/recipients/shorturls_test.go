package recipients_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/shorturls"
)

func shorten(t *testing.T, s *stacktest.Stack, token string, body any) (stacktest.Response, model.ShortenedUrlResponse) {
	t.Helper()
	r := s.Do(t, http.MethodPost, "/v2/public/shortenedUrl", token, body)
	var res model.ShortenedUrlResponse
	if r.Status == http.StatusOK {
		r.JSON(t, &res)
	}
	return r, res
}

// noRedirect follows nothing, so the test sees the 302 itself.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}

func follow(t *testing.T, s *stacktest.Stack, code string) *http.Response {
	t.Helper()
	res, err := noRedirect.Get(s.URL + "/s/" + code)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestShortenedURLs(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	_, otherTok := s.NewTenant(t)
	target := "https://alerts.example.com/a/17?r=88&x=%20y"

	r, first := shorten(t, s, tok, map[string]any{"url": target})
	if r.Status != http.StatusOK {
		t.Fatalf("create %d %s", r.Status, r.Body)
	}
	u := first.ShortenedUrl
	if !shorturls.ValidCode(u.Code) || !strings.HasSuffix(u.ShortURL, "/s/"+u.Code) || u.TargetURL != target || u.ExpiresAt != nil || first.Reused {
		t.Fatalf("short URL %+v", first)
	}
	// The same target reuses its code; another tenant gets its own.
	if _, again := shorten(t, s, tok, map[string]any{"url": target}); again.ShortenedUrl.Code != u.Code || !again.Reused {
		t.Fatalf("same target %+v", again)
	}
	_, theirs := shorten(t, s, otherTok, map[string]any{"url": target})
	if theirs.ShortenedUrl.Code == u.Code || theirs.Reused {
		t.Fatalf("another tenant shares a code %+v", theirs)
	}
	expiry := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	_, expiring := shorten(t, s, tok, map[string]any{"url": target, "expiresAt": expiry})
	if expiring.ShortenedUrl.Code == u.Code || expiring.ShortenedUrl.ExpiresAt == nil || !expiring.ShortenedUrl.ExpiresAt.Equal(expiry) {
		t.Fatalf("with an expiry %+v", expiring)
	}

	// Following: 302 to the target, no caching, clicks counted; no token needed.
	for range 3 {
		res := follow(t, s, u.Code)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != target || res.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("follow %d %v", res.StatusCode, res.Header)
		}
	}
	// Shortening the same target again answers the link with its clicks.
	if _, again := shorten(t, s, tok, map[string]any{"url": target}); !again.Reused || again.ShortenedUrl.Code != u.Code || again.ShortenedUrl.Clicks != 3 {
		t.Fatalf("clicks %+v", again)
	}
	if res := follow(t, s, "zzzzzzzz"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown code %d", res.StatusCode)
	}
	if res := follow(t, s, "not-a-code"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("malformed code %d", res.StatusCode)
	}
	// Past its expiry a link answers 410. The expiry is far enough ahead
	// that shortening it is answered before it passes on a loaded machine.
	soon := time.Now().Add(5 * time.Second).UTC().Truncate(time.Second).Add(time.Second)
	r, expired := shorten(t, s, tok, map[string]any{"url": target + "&soon", "expiresAt": soon})
	if r.Status != http.StatusOK || expired.ShortenedUrl.ExpiresAt == nil || !expired.ShortenedUrl.ExpiresAt.Equal(soon) {
		t.Fatalf("with a close expiry %d %s", r.Status, r.Body)
	}
	time.Sleep(time.Until(soon) + 100*time.Millisecond)
	if res := follow(t, s, expired.ShortenedUrl.Code); res.StatusCode != http.StatusGone {
		t.Fatalf("expired %d", res.StatusCode)
	}

	for _, body := range []map[string]any{
		{"url": "javascript:alert(1)"},
		{"url": "ftp://files.example.com/a"},
		{"url": "https:///nohost"},
		{"url": "https://user:pw@example.com/"},
		{"url": "https://example.com/" + strings.Repeat("a", 2048)},
		{"url": "https://example.com/", "expiresAt": time.Now().Add(-time.Minute)},
		{},
	} {
		if r, _ := shorten(t, s, tok, body); r.Status != http.StatusBadRequest {
			t.Errorf("%v: %d %s", body, r.Status, r.Body)
		}
	}
	if r, _ := shorten(t, s, "", map[string]any{"url": target}); r.Status != http.StatusUnauthorized {
		t.Fatalf("create without token %d", r.Status)
	}
}
