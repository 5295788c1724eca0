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
	"time"
)

// NewClient returns a pooled keep-alive HTTP client for one provider with
// the given request timeout (15s when zero).
func NewClient(timeout time.Duration) *http.Client {
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
	return &http.Client{Timeout: timeout, Transport: tr}
}

// StatusError is a provider's non-2xx answer.
type StatusError struct {
	Status int
	// Body is the start of the provider's answer, for the result's error text.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("provider answered %d", e.Status)
	}
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Body)
}

// Permanent reports whether err is a failure a retry will not fix: a 4xx
// answer other than 408 (timeout) and 429 (rate limit). Network errors and
// 5xx answers are temporary.
func Permanent(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	return se.Status >= 400 && se.Status < 500 && se.Status != http.StatusRequestTimeout && se.Status != http.StatusTooManyRequests
}

// Unreachable reports whether err means the provider could not be reached
// or did not answer (connection refused or reset, DNS failure, timeout):
// the request got no HTTP answer. A cancelled context is not.
func Unreachable(err error) bool {
	var ue *url.Error
	if !errors.As(err, &ue) || errors.Is(err, context.Canceled) {
		return false
	}
	var se *StatusError
	return !errors.As(err, &se)
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
// statuses are a *StatusError. Answers are read up to 4 MiB.
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
		return nil, fmt.Errorf("%s %s: %w", method, redact(r.URL), err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return b, &StatusError{Status: res.StatusCode, Body: snippet(b)}
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
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode answer: %w", err)
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

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// redact keeps the scheme, host and path of u: query strings and user info
// may hold credentials, and webhook paths are secrets themselves.
func redact(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "provider"
	}
	if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
		rest = rest[at+1:]
	}
	host := strings.SplitN(rest, "/", 2)[0]
	return scheme + "://" + host
}
