// Package sms delivers text messages through an HTTP provider. For each
// message it posts JSON {"to","body","idempotencyKey","tenant"} to the
// provider's URL with "Authorization: Bearer <token>" and an
// "Idempotency-Key" header; the provider answers 2xx with {"id": "..."}.
// A 4xx answer (except 429) is a permanent failure of that message; 429, 5xx
// and network errors are temporary. Requests of a batch run concurrently up
// to a bound over one pooled keep-alive client.
package sms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tocsin/tocsin/channels"
)

// Config says how to reach the provider.
type Config struct {
	// URL is the provider's endpoint for new messages.
	URL string
	// Token is sent as a bearer token when not empty.
	Token string
	// Concurrency bounds the requests of one batch in flight at once (16 when zero).
	Concurrency int
	// Timeout bounds one request (15 seconds when zero).
	Timeout time.Duration
}

// Sender posts text messages to the HTTP provider. It implements channels.Sender.
type Sender struct {
	cfg    Config
	client *http.Client
}

var _ channels.Sender = (*Sender)(nil)

// New checks cfg and returns a Sender with its own pooled HTTP client.
func New(cfg Config) (*Sender, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sms provider url %q: want http(s)://host/path", cfg.URL)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = cfg.Concurrency * 2
	tr.MaxIdleConnsPerHost = cfg.Concurrency
	tr.MaxConnsPerHost = cfg.Concurrency
	tr.IdleConnTimeout = 90 * time.Second
	return &Sender{cfg: cfg, client: &http.Client{Transport: tr, Timeout: cfg.Timeout}}, nil
}

// Request is the JSON body posted for one message.
type Request struct {
	To             string `json:"to"`
	Body           string `json:"body"`
	IdempotencyKey string `json:"idempotencyKey"`
	Tenant         string `json:"tenant"`
}

// Response is the provider's JSON answer to an accepted message.
type Response struct {
	ID string `json:"id"`
}

// Send posts every message and returns one result per message, in order. It
// returns an error only when no message reached the provider at all because
// of network errors (the provider is down), or when ctx ended.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	results := make([]channels.Result, len(msgs))
	netErrs := make([]error, len(msgs))
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range msgs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("send texts: %w", ctx.Err())
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			results[i], netErrs[i] = s.post(ctx, msgs[i])
		}(i)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("send texts: %w", err)
	}
	if len(msgs) > 0 {
		all := true
		for _, e := range netErrs {
			if e == nil {
				all = false
				break
			}
		}
		if all {
			return nil, fmt.Errorf("sms provider unreachable: %w", netErrs[0])
		}
	}
	return results, nil
}

// post sends one message. The second result is the network error when the
// provider could not be reached.
func (s *Sender) post(ctx context.Context, m channels.Message) (channels.Result, error) {
	res := channels.Result{Key: m.Key, Outcome: channels.Failed}
	body := m.Text
	if body == "" {
		body = m.Subject
	}
	if strings.TrimSpace(m.To) == "" || body == "" {
		res.Permanent, res.Error = true, "a text message needs a number and a body"
		return res, nil
	}
	b, err := json.Marshal(Request{To: m.To, Body: body, IdempotencyKey: m.Key, Tenant: m.Tenant})
	if err != nil {
		res.Permanent, res.Error = true, "encode: "+err.Error()
		return res, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(b))
	if err != nil {
		res.Permanent, res.Error = true, err.Error()
		return res, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if s.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	}
	if m.Key != "" {
		req.Header.Set("Idempotency-Key", m.Key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		err = redact(err)
		res.Error = "request: " + err.Error()
		return res, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		var r Response
		if err := json.Unmarshal(raw, &r); err != nil || r.ID == "" {
			// Accepted, but without an id we can quote: still sent.
			res.Outcome = channels.Sent
			return res, nil
		}
		res.Outcome, res.ProviderMessageID = channels.Sent, r.ID
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		res.Error = fmt.Sprintf("provider answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	default:
		res.Permanent = true
		res.Error = fmt.Sprintf("provider refused the message with %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return res, nil
}

// redact drops the URL from a client error: it may carry credentials.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
