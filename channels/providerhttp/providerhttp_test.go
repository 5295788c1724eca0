package providerhttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/hooks"
)

// seen is what a test provider received.
type seen struct {
	method, path string
	header       http.Header
	body         []byte
}

// recorder starts a provider that records each request and answers status
// with body.
func recorder(t *testing.T, status int, body string) (*httptest.Server, chan seen) {
	t.Helper()
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: b}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// brokenAnswer starts a provider that answers status promising a
// 100-byte body, writes 10 bytes of it and closes the connection.
func brokenAnswer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":\"m-", status, http.StatusText(status))
		_ = buf.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// closedURL returns a loopback address nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// stalling starts a provider that never answers before the request ends.
func stalling(t *testing.T) *httptest.Server {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv
}

func TestRequestsCarryBodyAndHeaders(t *testing.T) {
	cl := providerhttp.NewClient(5*time.Second, 0)
	cases := []struct {
		name   string
		send   func(ctx context.Context, url string) error
		method string
		path   string
		header map[string]string // "" means the header must be absent
		body   string
	}{
		{
			name: "Do sends the body with its content type and asks for JSON",
			send: func(ctx context.Context, url string) error {
				b, err := providerhttp.Do(ctx, cl, providerhttp.Request{URL: url + "/raw", Body: []byte("a=1"), ContentType: "application/x-www-form-urlencoded"})
				if err == nil && string(b) != `{"id":"m-1"}` {
					err = fmt.Errorf("body %q", b)
				}
				return err
			},
			method: http.MethodPost, path: "/raw",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json", "Authorization": "", "Idempotency-Key": ""},
			body:   "a=1",
		},
		{
			name: "an explicit Accept and method are kept",
			send: func(ctx context.Context, url string) error {
				_, err := providerhttp.Do(ctx, cl, providerhttp.Request{Method: http.MethodPut, URL: url + "/put", Header: http.Header{"Accept": {"text/plain"}}})
				return err
			},
			method: http.MethodPut, path: "/put",
			header: map[string]string{"Accept": "text/plain", "Content-Type": ""},
		},
		{
			name: "DoJSON encodes JSON with its content type and a bearer token",
			send: func(ctx context.Context, url string) error {
				var out struct{ ID string }
				err := providerhttp.DoJSON(ctx, cl, providerhttp.Request{URL: url + "/json", JSON: map[string]int{"n": 1}, Header: providerhttp.Bearer("tok-1")}, &out)
				if err == nil && out.ID != "m-1" {
					err = fmt.Errorf("decoded id %q", out.ID)
				}
				return err
			},
			method: http.MethodPost, path: "/json",
			header: map[string]string{"Content-Type": "application/json", "Accept": "application/json", "Authorization": "Bearer tok-1"},
			body:   `{"n":1}`,
		},
		{
			name: "Endpoint.Post carries the token and the idempotency key",
			send: func(ctx context.Context, url string) error {
				e := providerhttp.Endpoint{URL: url + "/v1", Token: "tok-2", Client: providerhttp.NewClient(0, 0)}
				var out struct{ ID string }
				err := e.Post(ctx, "/messages", providerhttp.Request{JSON: []string{"x"}, Header: http.Header{"X-Extra": {"1"}}}, "key-7", &out)
				if err == nil && out.ID != "m-1" {
					err = fmt.Errorf("decoded id %q", out.ID)
				}
				return err
			},
			method: http.MethodPost, path: "/v1/messages",
			header: map[string]string{"Authorization": "Bearer tok-2", "Idempotency-Key": "key-7", "X-Extra": "1", "Content-Type": "application/json"},
			body:   `["x"]`,
		},
		{
			name: "a Call without token or key sends neither header",
			send: func(ctx context.Context, url string) error {
				return providerhttp.Call{Request: providerhttp.Request{URL: url + "/call"}}.Send(ctx, cl, nil)
			},
			method: http.MethodPost, path: "/call",
			header: map[string]string{"Authorization": "", "Idempotency-Key": ""},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := recorder(t, http.StatusOK, `{"id":"m-1"}`)
			if err := c.send(context.Background(), srv.URL); err != nil {
				t.Fatalf("send: %v", err)
			}
			r := <-got
			if r.method != c.method || r.path != c.path {
				t.Errorf("request %s %s, want %s %s", r.method, r.path, c.method, c.path)
			}
			for k, want := range c.header {
				if v := r.header.Get(k); v != want {
					t.Errorf("header %s = %q, want %q", k, v, want)
				}
			}
			if string(r.body) != c.body {
				t.Errorf("body %q, want %q", r.body, c.body)
			}
		})
	}
}

func TestDoJSONWithoutAnythingToDecode(t *testing.T) {
	for _, body := range []string{"", "  \n", "not json"} {
		srv, got := recorder(t, http.StatusAccepted, body)
		if body == "not json" {
			// Nothing asked for the answer: it is not read as JSON.
			if err := providerhttp.DoJSON(context.Background(), srv.Client(), providerhttp.Request{URL: srv.URL}, nil); err != nil {
				t.Errorf("DoJSON(nil out) on %q: %v", body, err)
			}
		} else {
			var out struct{ ID string }
			if err := providerhttp.DoJSON(context.Background(), srv.Client(), providerhttp.Request{URL: srv.URL}, &out); err != nil || out.ID != "" {
				t.Errorf("DoJSON on %q: id %q, %v", body, out.ID, err)
			}
		}
		<-got
	}
}

func TestStatusDecidesWhenTheBodyBreaksOff(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := brokenAnswer(t, status)
			var out struct{ ID string }
			err := providerhttp.DoJSON(context.Background(), providerhttp.NewClient(5*time.Second, 0), providerhttp.Request{URL: srv.URL}, &out)
			var se *providerhttp.StatusError
			if !errors.As(err, &se) || se.Status != status {
				t.Fatalf("err = %v, want *StatusError %d", err, status)
			}
			if providerhttp.Unreachable(err) {
				t.Errorf("an answered %d is Unreachable", status)
			}
		})
	}
}

func TestNonSuccessAnswerIsAStatusErrorWithoutTheBody(t *testing.T) {
	srv, got := recorder(t, http.StatusUnprocessableEntity, `{"error":"secret detail"}`)
	b, err := providerhttp.Do(context.Background(), srv.Client(), providerhttp.Request{URL: srv.URL})
	<-got
	var se *providerhttp.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusUnprocessableEntity {
		t.Fatalf("err = %v, want *StatusError 422", err)
	}
	if want := "provider answered 422 Unprocessable Entity"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if string(b) != `{"error":"secret detail"}` {
		t.Errorf("body %q", b)
	}
	if s := (&providerhttp.StatusError{Status: 599}).Error(); s != "provider answered 599" {
		t.Errorf("unknown status: %q", s)
	}
}

// unreadable checks that err is a 2xx answer that could not be read: an
// accepted message without id under AcceptUnreadable, a temporary failure
// otherwise.
func unreadable(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var se *providerhttp.StatusError
	if errors.As(err, &se) {
		t.Fatalf("err = %v, a StatusError", err)
	}
	if got := (providerhttp.Rules{AcceptUnreadable: true}).Answer("k", err, channels.Sent, "", ""); got != (channels.Result{Key: "k", Outcome: channels.Sent}) {
		t.Errorf("AcceptUnreadable: %+v, want Sent without id", got)
	}
	got := providerhttp.Answer("k", err, channels.Sent, "", "")
	if got.Outcome != channels.Failed || got.Permanent || got.Unreachable || got.Error == "" {
		t.Errorf("zero Rules: %+v, want a temporary, reached failure", got)
	}
	if got := (providerhttp.Rules{AcceptUnreadable: true}).Answer("k", errors.New("other"), channels.Sent, "", ""); got.Outcome != channels.Failed {
		t.Errorf("AcceptUnreadable accepts another error: %+v", got)
	}
}

func TestSuccessAnswerThatBreaksOffIsUnreadable(t *testing.T) {
	srv := brokenAnswer(t, http.StatusOK)
	var out struct{ ID string }
	err := providerhttp.DoJSON(context.Background(), providerhttp.NewClient(5*time.Second, 0), providerhttp.Request{URL: srv.URL}, &out)
	unreadable(t, err)
	if providerhttp.Unreachable(err) {
		t.Error("a 2xx answer is Unreachable")
	}
}

func TestSuccessAnswerThatIsNotStorableTextIsUnreadable(t *testing.T) {
	cases := map[string]string{
		"invalid UTF-8": "{\"id\":\"m-\xff\"}",
		"NUL escape":    `{"id":"m-\u0000"}`,
		"not JSON":      `<html>ok</html>`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			srv, got := recorder(t, http.StatusOK, body)
			var out struct{ ID string }
			err := providerhttp.DoJSON(context.Background(), srv.Client(), providerhttp.Request{URL: srv.URL}, &out)
			<-got
			unreadable(t, err)
		})
	}
}

func TestAnswersAreCutAt4MiB(t *testing.T) {
	const limit = 4 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("a"), 64<<10)
		for i := 0; i < (limit+(1<<20))/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	b, err := providerhttp.Do(context.Background(), srv.Client(), providerhttp.Request{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != limit {
		t.Errorf("read %d bytes, want %d", len(b), limit)
	}
}

func TestPermanentByStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var status int
		fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/"), &status)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	cases := []struct {
		status             int
		permanent, timeout bool // timeout: under TimeoutIsPermanent
	}{
		{400, true, true},
		{401, true, true},
		{403, true, true},
		{404, true, true},
		{422, true, true},
		{408, false, true},
		{429, false, false},
		{500, false, false},
		{502, false, false},
		{503, false, false},
		{504, false, false},
	}
	for _, c := range cases {
		err := providerhttp.DoJSON(context.Background(), srv.Client(), providerhttp.Request{URL: fmt.Sprintf("%s/%d", srv.URL, c.status)}, nil)
		var se *providerhttp.StatusError
		if !errors.As(err, &se) || se.Status != c.status {
			t.Fatalf("%d: err = %v", c.status, err)
		}
		if got := providerhttp.Permanent(err); got != c.permanent {
			t.Errorf("%d: Permanent = %v, want %v", c.status, got, c.permanent)
		}
		if got := (providerhttp.Rules{TimeoutIsPermanent: true}).Permanent(err); got != c.timeout {
			t.Errorf("%d: TimeoutIsPermanent: Permanent = %v, want %v", c.status, got, c.timeout)
		}
		if got := providerhttp.Permanent(fmt.Errorf("batch: %w", err)); got != c.permanent {
			t.Errorf("%d wrapped: Permanent = %v, want %v", c.status, got, c.permanent)
		}
		res := providerhttp.Failed("k", err)
		if res.Outcome != channels.Failed || res.Permanent != c.permanent || res.Unreachable || res.Error != err.Error() {
			t.Errorf("%d: Failed = %+v", c.status, res)
		}
	}
	for _, err := range []error{nil, errors.New("provider said no"), context.DeadlineExceeded} {
		if providerhttp.Permanent(err) {
			t.Errorf("Permanent(%v) = true", err)
		}
	}
}

func TestRefusedAddressIsPermanent(t *testing.T) {
	srv, _ := recorder(t, http.StatusOK, `{"id":"m-1"}`)
	policy, err := hooks.NewPolicy(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	err = providerhttp.Endpoint{URL: srv.URL, Token: "tok", Client: policy.ProviderClient(5 * time.Second)}.Post(context.Background(), "/m", providerhttp.Request{}, "", nil)
	if err == nil {
		t.Fatal("a loopback provider was reached through the outbound policy")
	}
	if !providerhttp.Permanent(err) {
		t.Errorf("refused address %v is not permanent", err)
	}
	if !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("error %q does not say the address is not allowed", err)
	}
}

// A name that does not resolve fails as an address the policy refuses
// does, with the same reason, so that a tenant's provider URL cannot probe
// which internal names exist.
func TestUnresolvableNameReadsAsRefused(t *testing.T) {
	policy, err := hooks.NewPolicy(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	cl := policy.ProviderClient(5 * time.Second)
	reasonOf := func(host string) error {
		err := providerhttp.Endpoint{URL: "http://" + host, Token: "tok", Client: cl}.Post(context.Background(), "/m", providerhttp.Request{}, "", nil)
		if err == nil {
			t.Fatalf("%s was reached", host)
		}
		return err
	}
	refused := reasonOf("127.0.0.1:9")
	missing := reasonOf("nothing-here.invalid")
	after := func(err error) string {
		_, r, _ := strings.Cut(err.Error(), "http://")
		_, r, _ = strings.Cut(r, ": ")
		return r
	}
	if after(refused) != after(missing) {
		t.Errorf("an unresolvable name reads %q, a refused address %q", missing, refused)
	}
	if !providerhttp.Permanent(missing) || providerhttp.Failed("k", missing).Unreachable {
		t.Errorf("unresolvable name %v: want permanent, not unreachable", missing)
	}
}

func TestUnreachable(t *testing.T) {
	cl := providerhttp.NewClient(5*time.Second, 0)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	status, _ := recorder(t, http.StatusServiceUnavailable, "")
	stall := stalling(t)
	cases := []struct {
		name string
		err  func() error
		want bool
	}{
		{"closed port", func() error {
			_, err := providerhttp.Do(context.Background(), cl, providerhttp.Request{URL: closedURL(t)})
			return err
		}, true},
		{"client timeout", func() error {
			_, err := providerhttp.Do(context.Background(), providerhttp.NewClient(100*time.Millisecond, 0), providerhttp.Request{URL: stall.URL})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a timeout %v is not DeadlineExceeded", err)
			}
			return err
		}, true},
		{"context deadline", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err := providerhttp.Do(ctx, cl, providerhttp.Request{URL: stall.URL})
			return err
		}, true},
		{"cancelled", func() error {
			_, err := providerhttp.Do(cancelled, cl, providerhttp.Request{URL: stall.URL})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("a cancelled request %v is not Canceled", err)
			}
			return err
		}, false},
		{"status", func() error {
			_, err := providerhttp.Do(context.Background(), cl, providerhttp.Request{URL: status.URL})
			return err
		}, false},
		{"nil", func() error { return nil }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			if got := providerhttp.Unreachable(err); got != c.want {
				t.Errorf("Unreachable(%v) = %v, want %v", err, got, c.want)
			}
			if err != nil {
				if got := providerhttp.Failed("k", err); got.Unreachable != c.want || got.Permanent {
					t.Errorf("Failed = %+v", got)
				}
			}
		})
	}
}

func TestErrorsDoNotRevealTheURLsSecrets(t *testing.T) {
	stall := stalling(t)
	closed := strings.TrimPrefix(closedURL(t), "http://")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	secret := func(host string) string { return "http://user:secret@" + host + "/hook/s3cr3tpath?token=abc#frag" }
	cases := []struct {
		name string
		ctx  context.Context
		cl   *http.Client
		url  string
	}{
		{"closed port", context.Background(), providerhttp.NewClient(5*time.Second, 0), secret(closed)},
		{"timeout", context.Background(), providerhttp.NewClient(100*time.Millisecond, 0), secret(strings.TrimPrefix(stall.URL, "http://"))},
		{"cancelled", cancelled, providerhttp.NewClient(5*time.Second, 0), secret(strings.TrimPrefix(stall.URL, "http://"))},
		{"malformed", context.Background(), providerhttp.NewClient(5*time.Second, 0), "http://user:secret@" + closed + "/hook/s3cr3tpath%zz?token=abc"},
		// A '/' in the password ends the authority early: the URL does not
		// parse, and a guess at its host would show "user:sec".
		{"malformed password", context.Background(), providerhttp.NewClient(5*time.Second, 0), "http://user:sec/ret@" + closed + "/x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := providerhttp.Endpoint{URL: c.url, Token: "tok-hidden", Client: c.cl}
			err := e.Post(c.ctx, "", providerhttp.Request{}, "key-hidden", nil)
			if err == nil {
				t.Fatal("no error")
			}
			msg := providerhttp.Failed("k", err).Error
			for _, s := range []string{"user", "secret", "token", "abc", "s3cr3tpath", "frag", "tok-hidden", "key-hidden"} {
				if strings.Contains(msg, s) {
					t.Errorf("error %q contains %q", msg, s)
				}
			}
		})
	}
}

func TestEndpointLimit(t *testing.T) {
	for _, c := range []struct {
		name        string
		concurrency int
		want        int
	}{
		{"zero", 0, 8},
		{"negative", -1, 8},
		{"explicit value kept", 3, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := (providerhttp.Endpoint{Concurrency: c.concurrency}).Limit(8); got != c.want {
				t.Errorf("Limit(8) = %d, want %d", got, c.want)
			}
		})
	}
}

func TestClientTimeout(t *testing.T) {
	// A new client gives up after its timeout.
	stall := stalling(t)
	start := time.Now()
	_, err := providerhttp.Do(context.Background(), providerhttp.NewClient(100*time.Millisecond, 0), providerhttp.Request{URL: stall.URL})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("NewClient(100ms) against a provider that does not answer: %v after %v", err, time.Since(start))
	}
}

func TestEndpointAs(t *testing.T) {
	cl := &http.Client{}
	e := providerhttp.Endpoint{URL: "https://p.example", Token: "platform", Concurrency: 4, Client: cl}
	got := e.As("tenant")
	if want := (providerhttp.Endpoint{URL: "https://p.example", Token: "tenant", Concurrency: 4, Client: cl}); got != want {
		t.Errorf("As = %+v, want %+v", got, want)
	}
	if e.Token != "platform" {
		t.Errorf("As changed the original token to %q", e.Token)
	}
	srv, seenReq := recorder(t, http.StatusOK, "")
	if err := (providerhttp.Endpoint{URL: srv.URL, Token: "platform", Client: srv.Client()}).As("tenant").Post(context.Background(), "/", providerhttp.Request{}, "", nil); err != nil {
		t.Fatal(err)
	}
	if a := (<-seenReq).header.Get("Authorization"); a != "Bearer tenant" {
		t.Errorf("Authorization %q, want the tenant's token", a)
	}
}

func TestAnswer(t *testing.T) {
	status := func(s int) error { return &providerhttp.StatusError{Status: s} }
	cases := []struct {
		name string
		err  error
		id   string
		noID string
		want channels.Result
	}{
		{"id", nil, "m-1", "", channels.Result{Key: "k", Outcome: channels.Delivered, ProviderMessageID: "m-1"}},
		{"no id allowed", nil, "", "", channels.Result{Key: "k", Outcome: channels.Delivered}},
		{"noID with id", nil, "m-1", "no message id", channels.Result{Key: "k", Outcome: channels.Delivered, ProviderMessageID: "m-1"}},
		{"noID without id", nil, "", "no message id", channels.Result{Key: "k", Outcome: channels.Failed, Error: "no message id"}},
		{"permanent status", status(404), "m-1", "", channels.Result{Key: "k", Outcome: channels.Failed, Permanent: true, Error: "provider answered 404 Not Found"}},
		{"temporary status", status(503), "", "no message id", channels.Result{Key: "k", Outcome: channels.Failed, Error: "provider answered 503 Service Unavailable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := providerhttp.Answer("k", c.err, channels.Delivered, c.id, c.noID); got != c.want {
				t.Errorf("Answer = %+v, want %+v", got, c.want)
			}
		})
	}
	if got := providerhttp.Refused("k", "no such account"); got != (channels.Result{Key: "k", Outcome: channels.Failed, Permanent: true, Error: "no such account"}) {
		t.Errorf("Refused = %+v", got)
	}
}

func TestNoneReached(t *testing.T) {
	down := channels.Result{Outcome: channels.Failed, Unreachable: true}
	up := channels.Result{Outcome: channels.Failed}
	cases := []struct {
		name string
		res  []channels.Result
		want bool
	}{
		{"nil", nil, false},
		{"empty", []channels.Result{}, false},
		{"one unreachable", []channels.Result{down}, true},
		{"all unreachable", []channels.Result{down, down, down}, true},
		{"one reached", []channels.Result{down, up, down}, false},
		{"one sent", []channels.Result{{Outcome: channels.Sent}, down}, false},
	}
	for _, c := range cases {
		if got := providerhttp.NoneReached(c.res); got != c.want {
			t.Errorf("%s: NoneReached = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIsCode(t *testing.T) {
	for s, want := range map[string]bool{
		"invalid_number": true, "E.164-bad": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "two words": false, "é": false, "a/b": false,
	} {
		if got := providerhttp.IsCode(s); got != want {
			t.Errorf("IsCode(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestClientBoundsItsConnections: a client made for conns connections never
// opens more to one provider, however many requests wait; requests beyond
// it queue for a connection and all succeed.
func TestClientBoundsItsConnections(t *testing.T) {
	var opened atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cl := providerhttp.NewClient(5*time.Second, 4)
	errs := make(chan error, 40)
	for range 40 {
		go func() {
			_, err := providerhttp.Do(context.Background(), cl, providerhttp.Request{URL: srv.URL})
			errs <- err
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := opened.Load(); n > 4 || n == 0 {
		t.Fatalf("%d connections opened, want 1 to 4", n)
	}
}

// holding starts a provider that holds each request for hold (or until the
// request ends) before answering {}, and returns the most requests it held
// at once.
func holding(t *testing.T, hold time.Duration) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var inFlight, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		select {
		case <-time.After(hold):
			_, _ = w.Write([]byte(`{}`))
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &peak
}

// TestTimeoutStartsWhenTheRequestHasAConnection: requests waiting for one
// of a client's conns connections are not timed; each gets the whole
// timeout for the provider's answer, so many more requests than
// connections to a provider that answers just within the timeout all
// succeed, and the provider never holds more than conns at once.
func TestTimeoutStartsWhenTheRequestHasAConnection(t *testing.T) {
	// Each answer comes well within the timeout; the last of the eight
	// requests on a connection waits longer than the timeout for its turn.
	srv, peak := holding(t, 400*time.Millisecond)
	cl := providerhttp.NewClient(1500*time.Millisecond, 2)
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, err := providerhttp.Do(context.Background(), cl, providerhttp.Request{URL: srv.URL})
			errs <- err
		}()
	}
	failed := 0
	for range 16 {
		if err := <-errs; err != nil {
			failed++
			t.Log(err)
		}
	}
	if failed > 0 {
		t.Errorf("%d of 16 requests failed waiting for one of 2 connections", failed)
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("the provider held %d requests at once, bound is 2", p)
	}
}

// TestSlowProviderTimesOutWithBoundedConnections: a provider slower than
// the timeout still times out, as an unreachable provider, and a request
// waiting for a connection ends when its context does.
func TestSlowProviderTimesOutWithBoundedConnections(t *testing.T) {
	srv, _ := holding(t, 5*time.Second)
	cl := providerhttp.NewClient(200*time.Millisecond, 1)
	start := time.Now()
	_, err := providerhttp.Do(context.Background(), cl, providerhttp.Request{URL: srv.URL})
	if !errors.Is(err, context.DeadlineExceeded) || !providerhttp.Unreachable(err) {
		t.Fatalf("slow provider: %v, want an unreachable timeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the timeout took %v", d)
	}

	// One request holds the only connection; a second one waits for it
	// until its context is cancelled, not until the first one ends.
	cl = providerhttp.NewClient(3*time.Second, 1)
	holder, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _, _ = providerhttp.Do(holder, cl, providerhttp.Request{URL: srv.URL}) }()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start = time.Now()
	_, err = providerhttp.Do(ctx, cl, providerhttp.Request{URL: srv.URL})
	if d := time.Since(start); !errors.Is(err, context.Canceled) || providerhttp.Unreachable(err) || d > time.Second {
		t.Fatalf("cancelled while waiting: %v after %v, want Canceled at once", err, d)
	}
}

// TestRedirectIsTheProvidersAnswer checks that a provider's redirect is not
// followed: it is a non-2xx answer, and the place it points to is not asked.
func TestRedirectIsTheProvidersAnswer(t *testing.T) {
	var followed atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed.Add(1)
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	}))
	defer srv.Close()
	_, err := providerhttp.Do(t.Context(), providerhttp.NewClient(time.Second, 2), providerhttp.Request{Method: http.MethodPost, URL: srv.URL + "/send"})
	var se *providerhttp.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusFound {
		t.Fatalf("err %v, want the 302 as a StatusError", err)
	}
	if followed.Load() != 0 {
		t.Error("the redirect was followed")
	}
}

// A provider's base URL keeps its query (a key may be there) and loses its
// fragment when an operation's path is appended.
func TestJoinPath(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"https://p.example":            "https://p.example/calls",
		"https://p.example/v1/":        "https://p.example/v1/calls",
		"https://p.example/v1?key=k&x": "https://p.example/v1/calls?key=k&x",
		"https://p.example/h#frag":     "https://p.example/h/calls",
	} {
		if got := providerhttp.JoinPath(base, "/calls"); got != want {
			t.Errorf("%s: %s, want %s", base, got, want)
		}
	}
}

// TestEndpointWithoutClientSendsNothing: an endpoint's client is the
// registry's, which follows the outbound URL policy; an endpoint built
// without one fails its posts rather than connect through a client that
// checks nothing.
func TestEndpointWithoutClientSendsNothing(t *testing.T) {
	t.Parallel()
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	t.Cleanup(srv.Close)
	err := providerhttp.Endpoint{URL: srv.URL, Token: "t"}.Post(context.Background(), "/messages", providerhttp.Request{JSON: []string{"x"}}, "k", nil)
	if err == nil || got.Load() != 0 {
		t.Fatalf("error %v, requests %d; want an error and no request", err, got.Load())
	}
	if r := providerhttp.Failed("k", err); r.Outcome != channels.Failed || r.Unreachable {
		t.Fatalf("result %+v, want a failure that does not pass for an unreachable provider", r)
	}
}
