// Package push delivers push notifications to device tokens through a push
// service's batch HTTP API: up to 100 notifications per request, one ticket
// per notification in the answer. Tokens the service reports as no longer
// registered are removed from person_devices. Emergency alerts with a loud
// tone use the critical sound and interruption level.
package push

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Options are the settings of a push or app notification (its
// channels.Message.Options).
type Options struct {
	// Emergency makes the notification high priority and time-sensitive.
	Emergency bool
	// LoudTone plays the loud tone (critical alert sound) and breaks
	// through do-not-disturb.
	LoudTone bool
	// Sound is the sound file of the loud tone (default loud_tone.caf, the
	// siren).
	Sound string
	// ToneSeconds is how long the app sounds the loud tone (its
	// DataLoudToneSeconds; default 10).
	ToneSeconds int
}

// Apps a device token belongs to (person_devices.app).
const (
	AppPush     = "push"
	AppMyAlerts = "myalerts"
)

// Keys of a notification's Data: the ids of its alert and recipient, by
// which the app fetches the alert and answers it, and, with the loud tone,
// how many seconds the app sounds it.
const (
	DataAlertID         = "alertId"
	DataRecipientID     = "recipientId"
	DataLoudToneSeconds = "loudToneSeconds"
)

// MaxBatch is the most notifications one request carries.
const MaxBatch = 100

// Notification is one entry of the service's request array.
type Notification struct {
	To                string            `json:"to"`
	Title             string            `json:"title,omitempty"`
	Body              string            `json:"body"`
	Data              map[string]string `json:"data,omitempty"`
	Priority          string            `json:"priority"`
	Sound             any               `json:"sound"`
	ChannelID         string            `json:"channelId"`
	InterruptionLevel string            `json:"interruptionLevel"`
}

// CriticalSound is the sound of a loud-tone notification.
type CriticalSound struct {
	Critical bool    `json:"critical"`
	Name     string  `json:"name"`
	Volume   float64 `json:"volume"`
}

// Ticket is the service's answer for one notification.
type Ticket struct {
	Status  string `json:"status"`
	ID      string `json:"id,omitempty"`
	Message string `json:"message,omitempty"`
	Details *struct {
		Error string `json:"error"`
	} `json:"details,omitempty"`
}

// Response is the service's answer to a batch.
type Response struct {
	Data []Ticket `json:"data"`
}

// Ticket errors.
const (
	ErrDeviceNotRegistered = "DeviceNotRegistered"
	ErrMessageTooBig       = "MessageTooBig"
	ErrMessageRateExceeded = "MessageRateExceeded"
	ErrInvalidCredentials  = "InvalidCredentials"
)

// TokenStore forgets device tokens the service no longer knows.
type TokenStore interface {
	Remove(ctx context.Context, tenant, app string, tokens []string) error
}

var _ TokenStore = (*channelstate.Devices)(nil)

// Sender delivers push notifications through the service's API at
// Endpoint: batches of up to MaxBatch are POSTed to /push/send under URL (providerhttp.JoinPath),
// with Concurrency batches in flight (DefaultConcurrency when not set).
type Sender struct {
	providerhttp.Endpoint
	// App is AppPush (when not set) or AppMyAlerts.
	App    string
	Tokens TokenStore
}

// DefaultConcurrency is how many batches are in flight when the Endpoint
// does not say.
const DefaultConcurrency = 8

// Notify builds the service's entry for msg.
func Notify(msg channels.Message) Notification {
	n := Notification{To: msg.To, Title: msg.Subject, Body: msg.Text, Priority: "normal", Sound: "default",
		ChannelID: "alerts", InterruptionLevel: "active", Data: map[string]string{}}
	if msg.AlertID != 0 {
		n.Data[DataAlertID] = strconv.FormatInt(msg.AlertID, 10)
	}
	if msg.RecipientID != 0 {
		n.Data[DataRecipientID] = strconv.FormatInt(msg.RecipientID, 10)
	}
	o := channels.OptionsOf[Options](msg)
	if o.Emergency {
		n.Priority, n.InterruptionLevel = "high", "time-sensitive"
	}
	if o.LoudTone {
		n.Priority, n.ChannelID, n.InterruptionLevel = "high", "emergency", "critical"
		n.Sound = CriticalSound{Critical: true, Name: cmp.Or(o.Sound, "loud_tone.caf"), Volume: 1}
		n.Data[DataLoudToneSeconds] = strconv.Itoa(cmp.Or(o.ToneSeconds, 10))
	}
	return n
}

// Send implements channels.Sender.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	out := make([]channels.Result, len(msgs))
	type chunk struct{ lo, hi int }
	var chunks []chunk
	for lo := 0; lo < len(msgs); lo += MaxBatch {
		chunks = append(chunks, chunk{lo, min(len(msgs), lo+MaxBatch)})
	}
	errs := channels.Each(chunks, s.Limit(DefaultConcurrency), func(c chunk) error {
		return s.batch(ctx, msgs[c.lo:c.hi], out[c.lo:c.hi])
	})
	failed := 0
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed++
		c := chunks[i]
		for j := c.lo; j < c.hi; j++ {
			out[j] = providerhttp.Failed(msgs[j].Key, err)
		}
	}
	if failed == len(chunks) && failed > 0 && !providerhttp.Permanent(errs[0]) {
		return nil, fmt.Errorf("push service: %w", errs[0])
	}
	gone := map[string][]string{}
	for i, r := range out {
		if r.Error == ErrDeviceNotRegistered {
			gone[msgs[i].Tenant] = append(gone[msgs[i].Tenant], msgs[i].To)
		}
	}
	if s.Tokens != nil {
		for tenant, tokens := range gone {
			// A token left behind is refused again next time and removed then.
			_ = s.Tokens.Remove(ctx, tenant, cmp.Or(s.App, AppPush), tokens)
		}
	}
	return out, nil
}

func (s *Sender) batch(ctx context.Context, msgs []channels.Message, out []channels.Result) error {
	body := make([]Notification, len(msgs))
	for i, m := range msgs {
		body[i] = Notify(m)
	}
	var res Response
	if err := s.Post(ctx, "/push/send", providerhttp.Request{JSON: body}, msgs[0].Key+"+"+strconv.Itoa(len(msgs)), &res); err != nil {
		return err
	}
	if len(res.Data) != len(msgs) {
		return fmt.Errorf("the push service returned %d tickets for %d notifications", len(res.Data), len(msgs))
	}
	for i, t := range res.Data {
		r := channels.Result{Key: msgs[i].Key}
		switch {
		case t.Status == "ok":
			r.Outcome, r.ProviderMessageID = channels.Sent, t.ID
		default:
			// The ticket's error code (DeviceNotRegistered, …) when it is
			// one; the service's free text is never echoed into results.
			r.Outcome, r.Error = channels.Failed, "the push service refused the notification"
			if t.Details != nil && providerhttp.IsCode(t.Details.Error) {
				r.Error = t.Details.Error
			}
			r.Permanent = r.Error != ErrMessageRateExceeded
		}
		out[i] = r
		channels.Report(ctx, r)
	}
	return nil
}
