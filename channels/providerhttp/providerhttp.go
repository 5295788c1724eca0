// Package providerhttp sends requests to channel providers' HTTP APIs and
// classifies their answers into delivered, temporary and permanent failures.
package providerhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"code.dny.dev/ssrf"

	"github.com/tocsin/tocsin/channels"
)

// NewClient returns a pooled keep-alive HTTP client for one provider with
// the given request timeout (15s when zero). When conns is positive, at most
// conns requests are in flight at once, over at most as many connections to
// the provider, kept idle between them: requests beyond it wait for a slot
// instead of opening (and then closing) more connections, which is what a
// sender whose concurrency bounds its requests wants when several batches
// share it. The timeout starts once a request has its slot: it bounds the
// provider's answer (headers and body), not the wait for a turn, which
// ends only with the request's context.
func NewClient(timeout time.Duration, conns int) *http.Client {
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 5 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	st := &slotted{next: tr, timeout: timeout}
	if conns > 0 {
		tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, tr.MaxIdleConns = conns, conns, 2*conns
		st.slots = make(chan struct{}, conns)
	}
	// No Client.Timeout: it would also count the wait for a slot. A
	// redirect is the provider's answer (a non-2xx), not followed: each hop
	// would get a timeout and a slot of its own.
	return &http.Client{Transport: st, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// slotted sends a request once it holds one of slots (any time when slots
// is nil) and gives it timeout from then until its answer's body is
// closed, when the slot is given back.
type slotted struct {
	next    http.RoundTripper
	slots   chan struct{}
	timeout time.Duration
}

// RoundTrip implements http.RoundTripper.
func (s *slotted) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
		case <-req.Context().Done():
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, req.Context().Err()
		}
	}
	ctx, cancel := context.WithTimeout(req.Context(), s.timeout)
	done := func() {
		cancel()
		if s.slots != nil {
			<-s.slots
		}
	}
	res, err := s.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		done()
		return nil, err
	}
	res.Body = &slotBody{ReadCloser: res.Body, done: sync.OnceFunc(done)}
	return res, nil
}

// slotBody is an answer's body that ends its request's timeout and gives
// its slot back when closed.
type slotBody struct {
	io.ReadCloser
	done func()
}

// Close implements io.Closer.
func (b *slotBody) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}

// StatusError is a provider's non-2xx answer.
type StatusError struct {
	Status int
}

// Error implements error. It names the status only: the provider's answer
// is never echoed into delivery results, where a tenant would read whatever
// the URL it configured answered.
func (e *StatusError) Error() string {
	if t := http.StatusText(e.Status); t != "" {
		return fmt.Sprintf("provider answered %d %s", e.Status, t)
	}
	return fmt.Sprintf("provider answered %d", e.Status)
}

// Rules say how a provider's answers are read. The zero Rules are those of
// most providers, which the package's Permanent, Failed and Answer apply;
// a provider whose answers mean something else sets its own.
type Rules struct {
	// TimeoutIsPermanent makes a 408 answer permanent like the other 4xx
	// answers; by default it is temporary.
	TimeoutIsPermanent bool
	// AcceptUnreadable makes a 2xx answer that cannot be decoded an
	// accepted message without the provider's id; by default it is a
	// temporary failure.
	AcceptUnreadable bool
}

// Permanent reports whether err is a failure a retry will not fix: a 4xx
// answer other than 408 (timeout) and 429 (rate limit), or an address the
// outbound policy refuses. Other network errors and 5xx answers are
// temporary.
func Permanent(err error) bool { return Rules{}.Permanent(err) }

// Permanent is the package's Permanent under r.
func (r Rules) Permanent(err error) bool {
	if errors.Is(err, errRefused) {
		// The policy will refuse the address again.
		return true
	}
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	timeout := se.Status == http.StatusRequestTimeout && !r.TimeoutIsPermanent
	return se.Status >= 400 && se.Status < 500 && !timeout && se.Status != http.StatusTooManyRequests
}

// Unreachable reports whether err means the provider could not be reached
// or did not answer (connection refused or reset, DNS failure, timeout):
// the request got no HTTP answer. A cancelled context is not.
func Unreachable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, errUnreachable) || errors.Is(err, errTimeout) {
		return true
	}
	var ue *url.Error
	var se *StatusError
	return errors.As(err, &ue) && !errors.As(err, &se)
}

// Request is one call to a provider.
type Request struct {
	Method string
	URL    string
	// Body is sent as is with ContentType; JSON, when not nil, is encoded
	// and sent as application/json instead.
	Body        []byte
	ContentType string
	JSON        any
	Header      http.Header
}

// Do sends r and returns the answer's body when the status is 2xx; other
// statuses are a *StatusError, whether or not their body could be read. A
// 2xx answer whose body breaks off is unreadable (see
// Rules.AcceptUnreadable). Answers are read up to 4 MiB.
func Do(ctx context.Context, cl *http.Client, r Request) ([]byte, error) {
	body, ct := r.Body, r.ContentType
	if r.JSON != nil {
		b, err := json.Marshal(r.JSON)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body, ct = b, "application/json"
	}
	method := r.Method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, r.URL, bytes.NewReader(body))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// The parser's error quotes the whole URL, credentials
			// included.
			err = &url.Error{Op: ue.Op, URL: redact(r.URL), Err: errors.New("invalid URL")}
		}
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	res, err := cl.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, redact(r.URL), reason(err))
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		// The status decides; a body cut short changes nothing.
		return b, &StatusError{Status: res.StatusCode}
	}
	if err != nil {
		// The provider answered 2xx: it has the message, whatever
		// happened to the rest of its answer.
		// The read error names addresses of both ends; the reason is enough.
		return nil, fmt.Errorf("%w: the answer broke off", errUnreadable)
	}
	return b, nil
}

// DoJSON is Do followed by decoding a 2xx answer into out (when not nil).
func DoJSON(ctx context.Context, cl *http.Client, r Request, out any) error {
	b, err := Do(ctx, cl, r)
	if err != nil {
		return err
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	// What is decoded may be stored (provider ids, statuses): PostgreSQL
	// text holds neither NUL characters nor invalid UTF-8.
	if !utf8.Valid(b) || bytes.Contains(b, []byte(`\u0000`)) {
		return fmt.Errorf("%w: not valid UTF-8 text", errUnreadable)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%w: %w", errUnreadable, err)
	}
	return nil
}

// Bearer returns headers with an Authorization: Bearer token (none when token is empty).
func Bearer(token string) http.Header {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return h
}

// Short reasons a provider could not be reached, for delivery results.
var (
	// errRefused: one reason for a name that resolves to no address and for
	// an address the policy refuses, so that a tenant's provider URL does
	// not tell which internal names exist.
	errRefused     = errors.New("the host does not resolve to an allowed address (loopback, private and reserved addresses are not allowed)")
	errTimeout     = errors.New("timed out")
	errUnreachable = errors.New("could not connect")
	// errUnreadable: a 2xx answer that could not be decoded.
	errUnreadable = errors.New("decode answer")
)

// reason reduces a transport error to a short, fixed reason, keeping the
// original wrapped for errors.Is (a timeout stays a timeout).
func reason(err error) error {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.Canceled):
		// Not err: the client's error quotes the whole URL.
		return context.Canceled
	case errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) || errors.Is(err, ssrf.ErrProhibitedPort),
		errors.As(err, &dns) && dns.IsNotFound:
		return errRefused
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Errorf("%w (%w)", errTimeout, context.DeadlineExceeded)
	default:
		return errUnreachable
	}
}

// redact keeps the scheme and host of raw: query strings and user info may
// hold credentials, and webhook paths are secrets themselves.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		// Where a URL that does not parse has its host is a guess, and a
		// wrong guess shows its credentials: name none of it.
		return "provider URL"
	}
	return u.Scheme + "://" + u.Host
}

// IsCode reports whether s looks like a provider's error code (at most 64
// ASCII letters, digits, '_', '-' and '.'), safe to keep in a delivery
// result, rather than free text.
func IsCode(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Call is a request made for one message or one batch of messages: Token
// goes in Authorization: Bearer and IdempotencyKey in Idempotency-Key, each
// left out when empty, next to the request's own headers.
type Call struct {
	Request
	Token          string
	IdempotencyKey string
}

// Send sends c through cl and decodes a 2xx answer into out (when not nil).
func (c Call) Send(ctx context.Context, cl *http.Client, out any) error {
	h := Bearer(c.Token)
	if c.IdempotencyKey != "" {
		h.Set("Idempotency-Key", c.IdempotencyKey)
	}
	for k, vs := range c.Header {
		h[k] = vs
	}
	r := c.Request
	r.Header = h
	return DoJSON(ctx, cl, r, out)
}

// Failed is the result of the message with key whose call failed with err:
// permanent and unreachable as err says.
func Failed(key string, err error) channels.Result { return Rules{}.Failed(key, err) }

// Failed is the package's Failed under r.
func (r Rules) Failed(key string, err error) channels.Result {
	return channels.Result{Key: key, Outcome: channels.Failed, Permanent: r.Permanent(err), Unreachable: Unreachable(err), Error: err.Error()}
}

// Refused is the result of the message with key that cannot be sent as it
// is (no such account, a malformed document): a permanent failure.
func Refused(key, reason string) channels.Result {
	return channels.Result{Key: key, Outcome: channels.Failed, Permanent: true, Error: reason}
}

// Answer is the result of the message with key whose call answered err:
// outcome with the provider's id when err is nil, Failed as
// err says otherwise. When noID is set, an answer without an id is a
// failure with that reason.
func Answer(key string, err error, outcome channels.Outcome, id, noID string) channels.Result {
	return Rules{}.Answer(key, err, outcome, id, noID)
}

// Answer is the package's Answer under r.
func (r Rules) Answer(key string, err error, outcome channels.Outcome, id, noID string) channels.Result {
	if r.AcceptUnreadable && errors.Is(err, errUnreadable) {
		err, id = nil, ""
	}
	if err == nil && id == "" && noID != "" {
		err = errors.New(noID)
	}
	if err != nil {
		return r.Failed(key, err)
	}
	return channels.Result{Key: key, Outcome: outcome, ProviderMessageID: id}
}

// NoneReached reports whether no message of a batch reached the provider:
// there are results and every one is Unreachable.
func NoneReached(res []channels.Result) bool {
	for _, r := range res {
		if !r.Unreachable {
			return false
		}
	}
	return len(res) > 0
}

// Endpoint is a provider's HTTP API as a channel's configuration names it:
// the base URL requests go to, the bearer token they carry, how many
// requests a batch has in flight (see Limit) and the client that sends
// them (see Post): the provider registry's, which checks every connection
// against the outbound URL policy. An Endpoint without a client sends
// nothing.
type Endpoint struct {
	URL         string
	Token       string
	Concurrency int
	Client      *http.Client
}

// Limit is how many requests of a batch e has in flight at once:
// Concurrency, or def when it is not set.
func (e Endpoint) Limit(def int) int {
	if e.Concurrency <= 0 {
		return def
	}
	return e.Concurrency
}

// As returns e carrying token instead of e.Token: the API as one of a
// tenant's accounts calls it.
func (e Endpoint) As(token string) Endpoint {
	e.Token = token
	return e
}

// JoinPath appends path to the path of the base URL, keeping its query (a
// provider's key may be there) and dropping a fragment, which is never
// sent: "https://p.example/v1?key=k" and "/calls" give
// "https://p.example/v1/calls?key=k". A base that does not parse is
// joined as text (the request then fails on it).
func JoinPath(base, path string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base + path
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath, u.Fragment, u.RawFragment = "", "", ""
	return u.String()
}

// errNoClient is the error of an Endpoint built without its client.
var errNoClient = errors.New("the provider endpoint has no HTTP client")

// Post sends r to path under e.URL (see JoinPath) with e.Token and
// idempotencyKey (see Call) through e.Client and decodes a 2xx answer
// into out (when not nil).
func (e Endpoint) Post(ctx context.Context, path string, r Request, idempotencyKey string, out any) error {
	if e.Client == nil {
		return errNoClient
	}
	r.URL = JoinPath(e.URL, path)
	return Call{Request: r, Token: e.Token, IdempotencyKey: idempotencyKey}.Send(ctx, e.Client, out)
}
