package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"code.dny.dev/ssrf"
)

// Outcome is what became of one delivery attempt.
type Outcome string

// The outcomes of an attempt.
const (
	// Delivered: the target answered 2xx.
	Delivered Outcome = "Delivered"
	// Failed: no 2xx (a network error, a timeout, 3xx, 4xx or 5xx); retried
	// while the schedule lasts.
	Failed Outcome = "Failed"
	// Gone: the target answered 410; the subscription is disabled.
	Gone Outcome = "Gone"
	// Refused: the target's address is not allowed (SSRF protection).
	Refused Outcome = "Refused"
)

// Outcomes lists every outcome.
var Outcomes = []Outcome{Delivered, Failed, Gone, Refused}

// Message is one signed POST.
type Message struct {
	URL       string
	ID        string
	Timestamp time.Time
	Body      []byte
	Secret    string
	Headers   map[string]string
}

// Result is what one attempt produced.
type Result struct {
	Outcome Outcome
	// Status is the HTTP status, 0 when no response came.
	Status  int
	Latency time.Duration
	Error   string
	// RetryAfter is the wait a 429 or 503 asked for, 0 when none.
	RetryAfter time.Duration
}

// RefusedError is the error of a Refused attempt.
const RefusedError = "the target's address is not allowed (loopback, private, link-local or otherwise reserved)"

// UserAgent identifies tocsin's deliveries.
const UserAgent = "tocsin-hooks/1.0"

// Send POSTs m with client and classifies the answer. It never returns an
// error: every failure is a Result.
func Send(ctx context.Context, client *http.Client, m Message) Result {
	sig, err := Sign(m.Secret, m.ID, m.Timestamp, m.Body)
	if err != nil {
		return Result{Outcome: Failed, Error: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(m.Body))
	if err != nil {
		// Not the error, which quotes the whole URL: its path and query
		// may hold the receiver's credentials.
		return Result{Outcome: Failed, Error: "the target URL is not a valid URL"}
	}
	for k, v := range m.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set(HeaderID, m.ID)
	req.Header.Set(HeaderTimestamp, fmt.Sprint(m.Timestamp.Unix()))
	req.Header.Set(HeaderSignature, sig)

	start := time.Now()
	res, err := client.Do(req)
	r := Result{Latency: time.Since(start)}
	if err != nil {
		r.Outcome, r.Error = Failed, describe(err, client.Timeout)
		if errors.Is(err, ssrf.ErrProhibitedIP) || errors.Is(err, ssrf.ErrProhibitedNetwork) || errors.Is(err, ssrf.ErrProhibitedPort) {
			// Not the dial error, which names the address the host
			// resolved to: the history would tell a tenant the
			// addresses of internal names.
			r.Outcome, r.Error = Refused, RefusedError
		}
		return r
	}
	defer res.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	r.Status = res.StatusCode
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		r.Outcome = Delivered
	case res.StatusCode == http.StatusGone:
		r.Outcome, r.Error = Gone, "the target answered 410 Gone; the subscription is disabled"
	case res.StatusCode >= 300 && res.StatusCode < 400:
		r.Outcome = Failed
		r.Error = fmt.Sprintf("HTTP %d: redirects are not followed (Location: %s)", res.StatusCode, clip(res.Header.Get("Location"), 200))
	default:
		r.Outcome = Failed
		r.Error = fmt.Sprintf("HTTP %d", res.StatusCode)
		if s := clip(string(snippet), 200); s != "" {
			r.Error += ": " + s
		}
		if res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable {
			r.RetryAfter = RetryAfter(res.Header.Get("Retry-After"), time.Now())
		}
	}
	return r
}

func describe(err error, timeout time.Duration) string {
	var ne interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "Post ") {
		msg = msg[i+2:] // drop "Post \"url\": "
	}
	return clip(msg, 300)
}

// clip shortens s to at most n bytes of valid UTF-8 on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
