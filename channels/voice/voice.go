// Package voice places phone calls through an HTTP voice provider: a
// text-to-speech message or a stored audio file, repeated, with an
// answering-machine behaviour and an optional press-1-to-confirm. The
// provider reports each call's outcome to our status-callback operation,
// signed with the tenant's signing secret; busy and unanswered calls are
// dialled again per the delivery settings. ETN uses the same provider with a
// per-tenant limit of calls in progress (see Throttle).
package voice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
)

// Options are the settings of a voice or ETN message (its
// channels.Message.Options); the zero value of each is its default.
type Options struct {
	// AudioKey is the object key of a stored voice-encoded audio file: the
	// provider gets a short-lived link to it, made for each attempt.
	AudioKey string
	// AudioFile is the stored file's name as the alert gives it, for the
	// delivery's error when the file cannot be linked.
	AudioFile string
	// AudioURL is a URL the provider fetches and plays instead of speaking
	// the text, when there is no AudioKey.
	AudioURL string
	// Repeat is how often the message is played in one call (1-10, default 1).
	Repeat int
	// AnsweringMachine is LeaveMessage (default), HangUp or PlayImmediately.
	AnsweringMachine string
	// Confirm asks the callee to press 1 to confirm.
	Confirm bool
	// Language is the text-to-speech language (default en-US).
	Language string
	// CallerID is the number the call shows (the request's from); the
	// provider's configured number (Sender.From) when empty.
	CallerID string
	// MaxAttempts is how many calls are made in total when the line is busy
	// or nobody answers (1-10, default 1).
	MaxAttempts int
	// RetryIntervalSeconds is the wait before dialling again (30-3600,
	// default 300).
	RetryIntervalSeconds int
	// Attempt is which attempt this is (default 1); set when a call is
	// dialled again.
	Attempt int
}

// bounded is an option's value held within lo..hi, def when it is not set
// (zero or less).
func bounded(v, def, lo, hi int) int {
	if v <= 0 {
		return def
	}
	return max(lo, min(hi, v))
}

func (o Options) repeat() int      { return bounded(o.Repeat, 1, 1, 10) }
func (o Options) attempt() int     { return bounded(o.Attempt, 1, 1, 100) }
func (o Options) maxAttempts() int { return bounded(o.MaxAttempts, 1, 1, 10) }
func (o Options) retryInterval() int {
	return bounded(o.RetryIntervalSeconds, 300, 30, 3600)
}

// Answering-machine behaviours.
const (
	LeaveMessage    = "LeaveMessage"
	HangUp          = "HangUp"
	PlayImmediately = "PlayImmediately"
)

// CallRequest is what the provider's POST {url}/calls receives.
type CallRequest struct {
	To   string `json:"to"`
	From string `json:"from"`
	// Say holds the text to speak; Play the audio to play. Exactly one is set.
	Say              *Say    `json:"say,omitempty"`
	Play             *Play   `json:"play,omitempty"`
	Repeat           int     `json:"repeat"`
	MachineDetection string  `json:"machineDetection"`
	Gather           *Gather `json:"gather,omitempty"`
	StatusCallback   string  `json:"statusCallback"`
	// Reference is echoed in every status callback of the call.
	Reference string `json:"reference"`
}

// Say is a text-to-speech instruction.
type Say struct {
	Text     string `json:"text"`
	Language string `json:"language"`
}

// Play is an audio instruction.
type Play struct {
	URL string `json:"url"`
}

// Gather asks the callee for digits after the message.
type Gather struct {
	Digits int    `json:"digits"`
	Prompt string `json:"prompt"`
}

// CallResponse is the provider's answer to a call request.
type CallResponse struct {
	CallID string `json:"callId"`
	Status string `json:"status"`
}

// ConfirmPrompt is spoken after the message when confirmation is asked for.
const ConfirmPrompt = "Press 1 to confirm that you received this message."

// CallLog records calls so status callbacks can be matched to them: Prepare
// before the request (a callback may overtake the answer), Placed after it.
type CallLog interface {
	Prepare(ctx context.Context, msg channels.Message, ch channels.Channel, attempt int) error
	Placed(ctx context.Context, tenant, key, providerCallID string) error
	Fail(ctx context.Context, tenant, key, reason string) error
}

// Throttle bounds a tenant's calls in progress. A call holds a slot from
// its request until its final status (the callback releases it).
type Throttle interface {
	Acquire(ctx context.Context, tenant, holder string) error
	Release(ctx context.Context, tenant, holder string) error
}

// AudioLinker gives the provider a link to a stored audio file.
type AudioLinker interface {
	AudioURL(ctx context.Context, key string) (string, error)
}

// Sender places calls through the provider's API at Endpoint: each is
// POSTed to /calls under URL (providerhttp.JoinPath), with Concurrency calls of a batch requested at
// once (DefaultConcurrency when not set).
type Sender struct {
	providerhttp.Endpoint
	// From is the caller id of calls whose message gives none
	// (Options.CallerID).
	From string
	// CallbackURL is our status-callback operation for this tenant and channel.
	CallbackURL string
	// Channel is Voice (when not set) or Etn, recorded with each call.
	Channel  channels.Channel
	Calls    CallLog
	Throttle Throttle
	Audio    AudioLinker
	// SlotWait bounds how long a call waits for a Throttle slot
	// (DefaultSlotWait when not set). A call that gets none fails
	// temporarily and is retried with its batch, so a tenant whose slots
	// are all held (by calls whose final status never arrived) sees
	// Retrying deliveries with the reason rather than a batch that waits
	// silently.
	SlotWait time.Duration
}

// Defaults of a Sender.
const (
	DefaultConcurrency = 16
	DefaultSlotWait    = 20 * time.Second
)

// Send implements channels.Sender: it requests one call per message.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	return channels.SendEach(ctx, msgs, s.Limit(DefaultConcurrency), s.call), nil
}

// Request builds the provider request of msg: it plays the options'
// AudioURL (a stored AudioKey is linked by Send) or speaks the text.
func (s *Sender) Request(msg channels.Message) (CallRequest, error) {
	o := channels.OptionsOf[Options](msg)
	req := CallRequest{
		To: msg.To, From: cmp.Or(o.CallerID, s.From), StatusCallback: s.CallbackURL, Reference: msg.Key,
		Repeat: o.repeat(), MachineDetection: LeaveMessage,
	}
	if v := o.AnsweringMachine; v != "" {
		switch v {
		case LeaveMessage, HangUp, PlayImmediately:
			req.MachineDetection = v
		default:
			return req, fmt.Errorf("unknown answering-machine behaviour %q", v)
		}
	}
	if u := o.AudioURL; u != "" {
		req.Play = &Play{URL: u}
	} else if msg.Text != "" {
		lang := o.Language
		if lang == "" {
			lang = "en-US"
		}
		req.Say = &Say{Text: msg.Text, Language: lang}
	} else {
		return req, fmt.Errorf("a voice message needs text or an audio file")
	}
	if o.Confirm {
		req.Gather = &Gather{Digits: 1, Prompt: ConfirmPrompt}
	}
	return req, nil
}

func (s *Sender) call(ctx context.Context, msg channels.Message) channels.Result {
	res := channels.Result{Key: msg.Key, Outcome: channels.Failed}
	o := channels.OptionsOf[Options](msg)
	linked := msg
	// spoken says why a call meant to play a stored file speaks its text.
	var spoken string
	if o.AudioKey != "" {
		// The link is made for this attempt only: the call log keeps the
		// key, so a redial hours later gets a fresh link.
		if s.Audio == nil {
			res.Permanent, res.Error = true, "no object store to link the audio file from"
			return res
		}
		u, err := s.Audio.AudioURL(ctx, o.AudioKey)
		switch {
		case err == nil:
			o.AudioURL = u
			linked.Options = o
		case errors.Is(err, channels.ErrFileMissing) && msg.Text != "":
			// The file was deleted after the alert was accepted: the call
			// still goes out, speaking the message (Request), and says so.
			spoken = channels.FileProblem("audio file", o.AudioFile, err) + ": the message was spoken instead"
		default:
			res.Permanent, res.Error = true, channels.FileProblem("audio file", o.AudioFile, err)
			return res
		}
	}
	req, err := s.Request(linked)
	if err != nil {
		res.Permanent, res.Error = true, err.Error()
		return res
	}
	attempt := o.attempt()
	if s.Throttle != nil {
		wait := s.SlotWait
		if wait <= 0 {
			wait = DefaultSlotWait
		}
		actx, cancel := context.WithTimeout(ctx, wait)
		err := s.Throttle.Acquire(actx, msg.Tenant, msg.Key)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("every call slot of the tenant stayed taken for %s (calls in progress up to maxConcurrentCalls, each until its final status callback)", wait)
			}
			res.Error = "no call slot: " + err.Error()
			return res
		}
	}
	if s.Calls != nil {
		if err := s.Calls.Prepare(ctx, msg, cmp.Or(s.Channel, channels.Voice), attempt); err != nil {
			s.release(ctx, msg)
			res.Error = err.Error()
			return res
		}
	}
	idem := msg.Key
	if attempt > 1 {
		idem += "/" + strconv.Itoa(attempt)
	}
	var cr CallResponse
	err = s.Post(ctx, "/calls", providerhttp.Request{JSON: req}, idem, &cr)
	if res := providerhttp.Answer(msg.Key, err, channels.Sent, cr.CallID, "the provider returned no call id"); res.Outcome == channels.Failed {
		s.release(ctx, msg)
		if s.Calls != nil {
			_ = s.Calls.Fail(context.WithoutCancel(ctx), msg.Tenant, msg.Key, res.Error)
		}
		res.Error = strings.TrimPrefix(spoken+"; "+res.Error, "; ")
		return res
	}
	if s.Calls != nil {
		if err := s.Calls.Placed(ctx, msg.Tenant, msg.Key, cr.CallID); err != nil {
			// The call is placed; its callbacks will not match. Say so.
			res.Outcome, res.ProviderMessageID, res.Error = channels.Sent, cr.CallID, strings.TrimPrefix(spoken+"; record call: "+err.Error(), "; ")
			return res
		}
	}
	return channels.Result{Key: msg.Key, Outcome: channels.Sent, ProviderMessageID: cr.CallID, Error: spoken}
}

func (s *Sender) release(ctx context.Context, msg channels.Message) {
	if s.Throttle != nil {
		_ = s.Throttle.Release(context.WithoutCancel(ctx), msg.Tenant, msg.Key)
	}
}
