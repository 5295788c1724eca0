// Package channels delivers messages to people through providers: email over
// SMTP, text messages and the other channels over their providers' HTTP APIs.
// Verification codes and alert deliveries both go through a Sender.
package channels

import (
	"context"
	"errors"
	"sync"
)

// Channel names a delivery channel.
type Channel string

// The channels tocsin delivers on.
const (
	Email           Channel = "email"
	Text            Channel = "text"
	Voice           Channel = "voice"
	Etn             Channel = "etn"
	Push            Channel = "push"
	MyAlertsApp     Channel = "myAlertsApp"
	Fax             Channel = "fax"
	Eas             Channel = "eas"
	MobileBroadcast Channel = "mobileBroadcast"
	TeamChat        Channel = "teamChat"
	SocialPostA     Channel = "socialPostA"
	SocialPostB     Channel = "socialPostB"
	Neighborhood    Channel = "neighborhood"
)

// Attachment is a file sent with a message.
type Attachment struct {
	Name        string
	ContentType string
	Data        []byte
}

// Message is one delivery to one address on one channel.
type Message struct {
	// Key identifies the delivery and is the same on every retry; providers
	// pass it on as their idempotency key so a retry never sends twice.
	Key     string
	Tenant  string
	Channel Channel
	// AlertID is the id of the alert the message belongs to (0: none, as
	// for a verification code).
	AlertID int64
	// RecipientID is the number (seq) of the alert's recipient the message
	// goes to (0: none, as for a broadcast).
	RecipientID int64
	// To is the address on the channel: an email address, an E.164 number,
	// a device token, a webhook URL.
	To          string
	Subject     string
	Text        string
	HTML        string
	Attachments []Attachment
	// Options are the settings of the message's channel, a value of the
	// options type its package declares (voice.Options, fax.Options, ...);
	// nil leaves every option at its default. Senders read them with
	// OptionsOf.
	Options any
}

// OptionsOf returns the options of type O that msg carries, or the zero O
// (every option at its default) when it carries none of that type.
func OptionsOf[O any](msg Message) O {
	o, _ := msg.Options.(O)
	return o
}

// Alert is AlertID as a nullable column: nil when the message belongs to
// no alert.
func (m Message) Alert() *int64 {
	if m.AlertID == 0 {
		return nil
	}
	id := m.AlertID
	return &id
}

// Outcome is what a provider said about one message.
type Outcome string

// The outcomes of one delivery attempt.
const (
	// Sent: the provider accepted the message; a receipt may follow.
	Sent Outcome = "Sent"
	// Delivered: the provider confirmed delivery.
	Delivered Outcome = "Delivered"
	// Failed: the message was not accepted.
	Failed Outcome = "Failed"
)

// Result is the outcome of one message of a batch.
type Result struct {
	Key               string
	Outcome           Outcome
	ProviderMessageID string
	// Permanent marks a failure that a retry will not fix (a bad address, a
	// rejected token). Temporary failures are retried.
	Permanent bool
	// Unreachable marks a failure to reach the provider at all (connection
	// refused or reset, no answer): another provider may still deliver it.
	Unreachable bool
	Error       string
}

// Sender delivers batches of messages on one channel. Send returns one
// Result per message, in order. An error means the batch could not be
// attempted at all (the provider is down) and the whole batch may be retried.
type Sender interface {
	Send(ctx context.Context, msgs []Message) ([]Result, error)
}

// ErrNoProvider is returned for a channel that has no provider configured.
var ErrNoProvider = errors.New("no provider configured for the channel")

// The failures of the readers of stored files that FileProblem words for
// the alert's author: the file is no longer in the object store (deleted
// after the alert that names it was accepted), or the object store failed.
var (
	ErrFileMissing     = errors.New("the stored file no longer exists")
	ErrFileUnavailable = errors.New("the file store could not be read")
)

// FileProblem says, in words for the alert's author, why a channel could
// not use the stored file what ("audio file", "document") the alert names
// name (the name as the alert gives it; "" for messages recorded before
// names were kept). Object keys and the object store's own words stay out
// of it; other errors of the readers are worded for the author already.
func FileProblem(what, name string, err error) string {
	if name != "" {
		what += " " + name
	} else {
		what = "the " + what
	}
	switch {
	case errors.Is(err, ErrFileMissing):
		return what + " no longer exists"
	case errors.Is(err, ErrFileUnavailable):
		return what + " could not be read from the file store"
	}
	return what + ": " + err.Error()
}

// Senders maps each configured channel to its Sender.
type Senders map[Channel]Sender

// For returns the Sender of ch or ErrNoProvider.
func (s Senders) For(ch Channel) (Sender, error) {
	if snd, ok := s[ch]; ok {
		return snd, nil
	}
	return nil, ErrNoProvider
}

// resultsKey is the context key of the function WithResults adds.
type resultsKey struct{}

// WithResults returns a copy of ctx through which Senders tell f the result
// of each message as soon as they know it, before Send returns and from any
// goroutine, so the caller knows what has left even if Send never returns
// (its process dies). Senders that do not report leave f uncalled.
func WithResults(ctx context.Context, f func(Result)) context.Context {
	return context.WithValue(ctx, resultsKey{}, f)
}

// Report tells the function WithResults added to ctx, if any, the result r
// of one message. Senders call it as each message's result is known.
func Report(ctx context.Context, r Result) {
	if f, ok := ctx.Value(resultsKey{}).(func(Result)); ok {
		f(r)
	}
}

// SendEach runs send for every message with at most limit in flight at once
// and returns the results in message order, reporting each (Report) as it
// comes. Senders whose provider takes one message per request build their
// Send on it.
func SendEach(ctx context.Context, msgs []Message, limit int, send func(context.Context, Message) Result) []Result {
	return Each(msgs, limit, func(m Message) Result {
		r := send(ctx, m)
		Report(ctx, r)
		return r
	})
}

// Each runs f for every item with at most limit (at least one) in flight at
// once and returns its answers in item order.
func Each[T, R any](items []T, limit int, f func(T) R) []R {
	out := make([]R, len(items))
	if limit < 1 {
		limit = 1
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = f(items[i])
		}()
	}
	wg.Wait()
	return out
}
