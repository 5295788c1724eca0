package hooks_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tocsin/tocsin/hooks"
)

func TestSignaturesVerifyWithTheReferenceLibrary(t *testing.T) {
	t.Parallel()
	secret, err := hooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q", secret)
	}
	body := []byte(`{"type":"file.uploaded","timestamp":"2026-01-01T00:00:00Z","data":{"a":1}}`)
	now := time.Now()
	sig, err := hooks.Sign(secret, "evt_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set(hooks.HeaderID, "evt_1")
	h.Set(hooks.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(hooks.HeaderSignature, sig)
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("reference library rejects our signature: %v", err)
	}
	// The reference library's own signature is the same string.
	ref, err := wh.Sign("evt_1", now, body)
	if err != nil || ref != sig {
		t.Fatalf("reference %q, ours %q (%v)", ref, sig, err)
	}
	// A changed body or id fails.
	if err := wh.Verify(append(body, ' '), h); err == nil {
		t.Fatal("tampered body verified")
	}
	h.Set(hooks.HeaderID, "evt_2")
	if err := wh.Verify(body, h); err == nil {
		t.Fatal("changed id verified")
	}
	if _, err := hooks.Sign("whsec_!!!", "x", now, body); err == nil {
		t.Fatal("signed with a malformed secret")
	}
}

func TestBackoffSpansADayWithJitter(t *testing.T) {
	t.Parallel()
	schedule := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	var total time.Duration
	for n := 1; n <= len(schedule); n++ {
		d, ok := hooks.Backoff(schedule, "hook-1-evt", n)
		if !ok {
			t.Fatalf("no retry %d", n)
		}
		base := schedule[n-1]
		if d < base*8/10 || d > base*12/10 {
			t.Fatalf("retry %d waits %s, outside ±20%% of %s", n, d, base)
		}
		again, _ := hooks.Backoff(schedule, "hook-1-evt", n)
		if again != d {
			t.Fatal("backoff is not deterministic")
		}
		total += d
	}
	if total < 20*time.Hour || total > 34*time.Hour {
		t.Fatalf("the schedule spans %s, not about a day", total)
	}
	if _, ok := hooks.Backoff(schedule, "x", len(schedule)+1); ok {
		t.Fatal("a retry past the schedule")
	}
	a, _ := hooks.Backoff(schedule, "a", 4)
	b, _ := hooks.Backoff(schedule, "b", 4)
	if a == b {
		t.Fatal("no jitter between deliveries")
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"":                              0,
		"30":                            30 * time.Second,
		"-5":                            0,
		"abc":                           0,
		"999999999":                     hooks.MaxRetryAfter,
		"Thu, 01 Jan 2026 00:02:00 GMT": 2 * time.Minute,
		"Wed, 31 Dec 2025 00:00:00 GMT": 0,
	}
	for in, want := range cases {
		if got := hooks.RetryAfter(in, now); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	strict, err := hooks.NewPolicy(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	loose, err := hooks.NewPolicy([]string{"127.0.0.0/8", "hooks.internal"}, true)
	if err != nil {
		t.Fatal(err)
	}
	looseLoopback, err := hooks.NewPolicy([]string{"127.0.0.0/8", "::1/128"}, true)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		p    *hooks.Policy
		url  string
		ok   bool
	}{
		{"public https", strict, "https://93.184.215.14/hook", true},
		{"loopback", strict, "https://127.0.0.1:8443/hook", false},
		{"localhost name", strict, "https://localhost/hook", false},
		{"private", strict, "https://10.1.2.3/hook", false},
		{"link-local metadata", strict, "https://169.254.169.254/latest/meta-data", false},
		{"ipv6 loopback", strict, "https://[::1]/hook", false},
		{"ipv4-mapped loopback", strict, "https://[::ffff:127.0.0.1]/hook", false},
		{"plain http", strict, "http://93.184.215.14/hook", false},
		{"ftp", strict, "ftp://93.184.215.14/hook", false},
		{"credentials", strict, "https://u:p@93.184.215.14/hook", false},
		{"relative", strict, "/hook", false},
		{"allowed loopback over http", loose, "http://127.0.0.1:9999/hook", true},
		{"allowed host name", loose, "https://hooks.internal/x", true},
		{"still refused private", loose, "https://10.0.0.1/hook", false},
		{"localhost where loopback is allowed", looseLoopback, "http://localhost:9999/hook", true},
		{"localhost. where loopback is allowed", looseLoopback, "http://localhost.:9999/hook", true},
	}
	for _, c := range cases {
		_, err := c.p.CheckURL(context.Background(), c.url)
		if c.ok != (err == nil) {
			t.Errorf("%s: %s: %v", c.name, c.url, err)
		}
		if err != nil && !errors.Is(err, hooks.ErrTarget) {
			t.Errorf("%s: error does not wrap ErrTarget: %v", c.name, err)
		}
	}
	// The refusal of another scheme names the schemes this policy takes.
	for _, c := range []struct {
		p    *hooks.Policy
		want string
	}{{strict, "the scheme must be https"}, {loose, "the scheme must be https or http"}} {
		if _, err := c.p.CheckURL(context.Background(), "ftp://93.184.215.14/hook"); err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("ftp refused with %v, want %q", err, c.want)
		}
	}
	// Provider URLs may name hosts that do not resolve yet, but not inward
	// ones written so that no resolver is asked.
	for _, u := range []string{
		"https://localhost./v1", "https://foo.localhost/v1", "https://192.168.1.1./v1", "https://127.1/v1",
		"https://0x7f000001/v1", "https://2130706433/v1", "https://0177.0.0.1/v1", "https://0x7f.1/v1",
	} {
		if _, err := strict.CheckProviderURL(context.Background(), u); err == nil || !errors.Is(err, hooks.ErrTarget) {
			t.Errorf("provider URL %s: %v, want refused", u, err)
		}
	}
	for _, u := range []string{"https://provider.not-yet-resolvable.invalid/v1", "https://123.example/v1", "https://93.184.215.14./v1"} {
		if _, err := strict.CheckProviderURL(context.Background(), u); err != nil {
			t.Errorf("provider URL %s: %v, want accepted", u, err)
		}
	}
	if _, err := hooks.NewPolicy([]string{"10.0.0.0/33"}, false); err == nil {
		t.Error("accepted a bad CIDR")
	}
}

func TestSendClassifiesAnswers(t *testing.T) {
	t.Parallel()
	status := 200
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		if status == 429 {
			w.Header().Set("Retry-After", "7")
		}
		if status == 302 {
			w.Header().Set("Location", "https://elsewhere.example/")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("nope"))
	}))
	defer srv.Close()
	secret, _ := hooks.NewSecret()
	msg := hooks.Message{URL: srv.URL, ID: "evt_1", Timestamp: time.Now(), Body: []byte(`{}`), Secret: secret, Headers: map[string]string{"X-Team": "ops"}}

	allowed, _ := hooks.NewPolicy([]string{"127.0.0.1"}, true)
	strict, _ := hooks.NewPolicy(nil, true)
	cases := []struct {
		status  int
		policy  *hooks.Policy
		outcome hooks.Outcome
		retry   time.Duration
	}{
		{200, allowed, hooks.Delivered, 0},
		{204, allowed, hooks.Delivered, 0},
		{302, allowed, hooks.Failed, 0},
		{410, allowed, hooks.Gone, 0},
		{429, allowed, hooks.Failed, 7 * time.Second},
		{500, allowed, hooks.Failed, 0},
		{200, strict, hooks.Refused, 0},
	}
	for _, c := range cases {
		status = c.status
		r := hooks.Send(context.Background(), c.policy.Client(5*time.Second), msg)
		if r.Outcome != c.outcome || r.RetryAfter != c.retry {
			t.Errorf("status %d: %+v", c.status, r)
		}
		if c.outcome == hooks.Failed && r.Error == "" {
			t.Errorf("status %d: failure without error text", c.status)
		}
		// The history does not tell a tenant the address its host resolved to.
		if c.outcome == hooks.Refused && (r.Error != hooks.RefusedError || strings.Contains(r.Error, "127.0.0.1")) {
			t.Errorf("refused with %q", r.Error)
		}
	}
	if got.Get("X-Team") != "ops" || got.Get(hooks.HeaderSignature) == "" || got.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", got)
	}
}

// A failure's error goes into the history a tenant reads: it never quotes
// the target URL, whose path and query may hold the receiver's credentials.
func TestSendErrorsDoNotQuoteTheURL(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	allowed, _ := hooks.NewPolicy([]string{"127.0.0.1"}, true)
	secret, _ := hooks.NewSecret()
	for _, url := range []string{
		closed.URL + "/in/tok_path_secret?key=tok_query_secret",
		"https://hooks.example/in/tok_path_secret\x7f?key=tok_query_secret",
	} {
		r := hooks.Send(context.Background(), allowed.Client(5*time.Second), hooks.Message{URL: url, ID: "evt_1", Timestamp: time.Now(), Body: []byte(`{}`), Secret: secret})
		if r.Outcome != hooks.Failed || r.Error == "" || strings.Contains(r.Error, "tok_") {
			t.Errorf("%q: %+v", url, r)
		}
	}
}

func TestCheckHeaders(t *testing.T) {
	t.Parallel()
	// one returns the only problem of h, failing when there is not one.
	one := func(h map[string]string) hooks.HeaderProblem {
		t.Helper()
		bad := hooks.CheckHeaders(h)
		if len(bad) != 1 {
			t.Fatalf("%v: %d problems %v, want one", h, len(bad), bad)
		}
		return bad[0]
	}
	if bad := hooks.CheckHeaders(map[string]string{"X-Api-Key": "k", "X-Team": "ops"}); len(bad) != 0 {
		t.Fatal(bad)
	}
	// One HTTP header given twice in different case: the later name is named.
	if p := one(map[string]string{"X-A": "1", "x-a": "2"}); p.Name != "x-a" || !strings.Contains(p.Err.Error(), "X-A and x-a") {
		t.Errorf("X-A and x-a: %+v", p)
	}
	for _, h := range []map[string]string{
		{"webhook-signature": "x"},
		{"Bad Name": "x"},
		{"X-A": "line\r\nInjected: yes"},
		{"content-type": "text/plain"},
	} {
		one(h)
	}
	// Every bad header is named, in order, not only the first.
	bad := hooks.CheckHeaders(map[string]string{"Content-Length": "1", "Expect": "x", "TE": "x", "X-Ok": "y", "Proxy-Authorization": "z"})
	var names []string
	for _, b := range bad {
		names = append(names, b.Name)
	}
	if strings.Join(names, ",") != "Content-Length,Expect,Proxy-Authorization,TE" {
		t.Errorf("named %v", names)
	}
	// Values are visible ASCII, spaces and tabs; the bad one is named.
	if bad := hooks.CheckHeaders(map[string]string{"X-A": "Bearer a~b!\t c"}); len(bad) != 0 {
		t.Errorf("visible ASCII refused: %v", bad)
	}
	for _, v := range []string{"geheimnis-ä€", "x\xff", "bell\a", "del\x7f"} {
		if p := one(map[string]string{"X-A": "ok", "X-B": v}); p.Name != "X-B" || !strings.Contains(p.Err.Error(), "visible ASCII") {
			t.Errorf("%q: %+v", v, p)
		}
	}
	// A masked value is checked against the stored one instead: a value
	// stored before the rule keeps its GET-PUT round trip.
	if bad := hooks.CheckHeaders(map[string]string{"X-A": "****s-ä€"}); len(bad) != 0 {
		t.Errorf("masked value refused: %v", bad)
	}
}
