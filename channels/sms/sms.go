// Package sms delivers text messages through an HTTP provider. For each
// message it posts JSON {"to","body","idempotencyKey","tenant"} (and
// "from", the number an alert's sender asks to send from) to the
// provider's URL with "Authorization: Bearer <token>" and an
// "Idempotency-Key" header; the provider answers 2xx with {"id": "..."}.
// Requests go through providerhttp with the provider's own rules: every
// 4xx answer but 429 (408 included) is a permanent failure of that
// message, 429, 5xx and network errors are temporary, an accepted message
// whose answer cannot be read is sent without an id, and a batch none of
// whose messages reached the provider is an error of the whole batch.
// Requests of a batch run concurrently up to a bound over one pooled
// keep-alive client.
package sms

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
)

// Config says how to reach the provider.
type Config struct {
	// URL is the provider's endpoint for new messages.
	URL string
	// Token is sent as a bearer token when not empty.
	Token string
	// Concurrency bounds the requests in flight at once (16 when zero), of
	// one batch and of all batches sent side by side through the Sender,
	// and its connections to the provider.
	Concurrency int
	// Timeout bounds the provider's answer to one request (15 seconds when
	// zero). It starts once the request has its turn among Concurrency: a
	// text waiting for one is not timed.
	Timeout time.Duration
}

// Sender posts text messages to the HTTP provider. It implements channels.Sender.
type Sender struct {
	cfg    Config
	client *http.Client
}

// rules are how the provider's answers are read (see the package comment).
var rules = providerhttp.Rules{TimeoutIsPermanent: true, AcceptUnreadable: true}

// New checks cfg and returns a Sender with its own pooled HTTP client.
func New(cfg Config) (*Sender, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Not the URL itself: a provider's key may be in it.
		return nil, errors.New("the sms provider url (TOCSIN_SMS_URL) must look like http(s)://host/path")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	return &Sender{cfg: cfg, client: providerhttp.NewClient(cfg.Timeout, cfg.Concurrency)}, nil
}

// Request is the JSON body posted for one message.
type Request struct {
	To   string `json:"to"`
	Body string `json:"body"`
	// From is the number to send from (Options.From); left out when the
	// message gives none, and the provider sends from its own.
	From           string `json:"from,omitempty"`
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
	res := channels.SendEach(ctx, msgs, s.cfg.Concurrency, s.post)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("send texts: %w", err)
	}
	if providerhttp.NoneReached(res) {
		return nil, fmt.Errorf("sms provider unreachable: %s", res[0].Error)
	}
	return res, nil
}

// post sends one message.
func (s *Sender) post(ctx context.Context, m channels.Message) channels.Result {
	body := m.Text
	if body == "" {
		body = m.Subject
	}
	if strings.TrimSpace(m.To) == "" || body == "" {
		return providerhttp.Refused(m.Key, "a text message needs a number and a body")
	}
	var r Response
	call := providerhttp.Call{Request: providerhttp.Request{URL: s.cfg.URL, JSON: Request{To: m.To, Body: body,
		From: channels.OptionsOf[Options](m).From, IdempotencyKey: m.Key, Tenant: m.Tenant}},
		Token: s.cfg.Token, IdempotencyKey: m.Key}
	err := call.Send(ctx, s.client, &r)
	return rules.Answer(m.Key, err, channels.Sent, r.ID, "")
}
