package voice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Statuses of a call as tocsin records them.
const (
	StatusRequested = "Requested"
	StatusRedialing = "Redialing"
	StatusAnswered  = "Answered"
	StatusConfirmed = "Confirmed"
	StatusBusy      = "Busy"
	StatusNoAnswer  = "NoAnswer"
	StatusFailed    = "Failed"
)

// Callback statuses a provider reports.
const (
	CallbackAnswered = "answered"
	CallbackBusy     = "busy"
	CallbackNoAnswer = "no-answer"
	CallbackFailed   = "failed"
)

// Callback is the body of a provider's status callback.
type Callback struct {
	CallID    string `json:"callId"`
	Reference string `json:"reference"`
	// Status is answered, busy, no-answer or failed.
	Status string `json:"status"`
	// AnsweredBy is human or machine for answered calls.
	AnsweredBy      string `json:"answeredBy,omitempty"`
	Digits          string `json:"digits,omitempty"`
	DurationSeconds int    `json:"durationSeconds,omitempty"`
	Error           string `json:"error,omitempty"`
}

// Call is the recorded state of one voice or ETN call.
type Call = channelstate.Call

// Errors of Record.
var (
	// ErrUnknownCall: no call of the tenant and channel has the reference.
	ErrUnknownCall = errors.New("no such call")
	// ErrStaleCallback: the callback is about an earlier attempt of the call.
	ErrStaleCallback = errors.New("callback of an earlier attempt")
	// ErrBadCallback: the callback's status is not one we know.
	ErrBadCallback = errors.New("unknown callback status")
)

// CallStore is the record of calls Calls keeps (channelstate.Calls).
type CallStore interface {
	Prepare(ctx context.Context, c channelstate.NewCall) error
	Placed(ctx context.Context, tenant, key, providerCallID string) error
	Update(ctx context.Context, tenant, channel, key string, decide func(channelstate.CurrentCall) (channelstate.CallUpdate, error)) (channelstate.Call, error)
	Get(ctx context.Context, tenant, key string) (channelstate.Call, error)
	ClaimDue(ctx context.Context, tenant string, alertID *int64, limit int) ([]channelstate.DueCall, error)
	Fail(ctx context.Context, tenant, key, reason string) error
	Pending(ctx context.Context, tenant string, alertID *int64) (int, error)
	Outlook(ctx context.Context, tenant string, alertID int64, ringWindow time.Duration) (channelstate.CallOutlook, error)
}

var _ CallStore = (*channelstate.Calls)(nil)

// Calls is the record of calls in PostgreSQL.
type Calls struct {
	DB *storage.DB
}

var _ CallLog = (*Calls)(nil)

func (c *Calls) store() CallStore { return &channelstate.Calls{DB: c.DB} }

// Prepare records that attempt of msg is about to be requested.
func (c *Calls) Prepare(ctx context.Context, msg channels.Message, ch channels.Channel, attempt int) error {
	stored := msg
	stored.Attachments = nil
	body, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("encode call: %w", err)
	}
	o := channels.OptionsOf[Options](msg)
	return c.store().Prepare(ctx, channelstate.NewCall{Tenant: msg.Tenant, Key: msg.Key, Channel: string(ch), AlertID: msg.Alert(),
		Recipient: msg.To, Message: body, Attempt: attempt, MaxAttempts: o.maxAttempts(), RetryIntervalSeconds: o.retryInterval()})
}

// storedMessage is a message as the call log keeps it (JSON of a
// channels.Message with voice Options). Rows written before messages had
// typed options hold a Metadata map of strings instead.
type storedMessage struct {
	channels.Message
	Options  Options
	Metadata map[string]string
}

// decodeMessage reads a message the call log keeps, in either shape.
func decodeMessage(b []byte) (channels.Message, error) {
	var s storedMessage
	if err := json.Unmarshal(b, &s); err != nil {
		return channels.Message{}, fmt.Errorf("decode call: %w", err)
	}
	m := s.Message
	m.Options = s.Options
	if md := s.Metadata; md != nil {
		m.AlertID, _ = strconv.ParseInt(md["alertId"], 10, 64)
		m.RecipientID, _ = strconv.ParseInt(md["recipientId"], 10, 64)
		m.Options = legacyOptions(md)
	}
	return m, nil
}

// legacyOptions reads the options of a message stored with Metadata, by
// the keys of that shape. A stored audio link was made from the key for
// one attempt and is not kept: the key is linked again.
func legacyOptions(md map[string]string) Options {
	// A number the old shape held was clamped to its option's bounds, even
	// when it was zero or less; Options reads those as unset, so they become
	// 1 here and clamp to the lower bound as before.
	num := func(k string) int {
		n, err := strconv.Atoi(md[k])
		if err == nil && n <= 0 {
			return 1
		}
		return n
	}
	o := Options{AudioKey: md["voice.audioKey"], Repeat: num("voice.repeat"), AnsweringMachine: md["voice.answeringMachine"],
		Confirm: md["voice.confirm"] == "true", Language: md["voice.language"], MaxAttempts: num("voice.maxAttempts"),
		RetryIntervalSeconds: num("voice.retryIntervalSeconds"), Attempt: num("voice.attempt")}
	if o.AudioKey == "" {
		o.AudioURL = md["voice.audioUrl"]
	}
	return o
}

// Placed records the provider's id of the call's current attempt.
func (c *Calls) Placed(ctx context.Context, tenant, key, providerCallID string) error {
	return c.store().Placed(ctx, tenant, key, providerCallID)
}

// Record applies a status callback to the call it references and returns the
// call as it is now. A busy or unanswered call with attempts left is
// scheduled to be dialled again after its retry interval.
func (c *Calls) Record(ctx context.Context, tenant string, ch channels.Channel, cb Callback) (Call, error) {
	row, err := c.store().Update(ctx, tenant, string(ch), cb.Reference, func(cur channelstate.CurrentCall) (channelstate.CallUpdate, error) {
		if slices.Contains(cur.EarlierCallIDs, cb.CallID) || (cur.ProviderCallID != "" && cb.CallID != cur.ProviderCallID) {
			return channelstate.CallUpdate{}, ErrStaleCallback
		}
		status, retry := "", false
		switch cb.Status {
		case CallbackAnswered:
			status = StatusAnswered
			if cur.Status == StatusConfirmed {
				status = StatusConfirmed
			}
		case CallbackBusy:
			status, retry = StatusBusy, true
		case CallbackNoAnswer:
			status, retry = StatusNoAnswer, true
		case CallbackFailed:
			status = StatusFailed
		default:
			return channelstate.CallUpdate{}, ErrBadCallback
		}
		msg, err := decodeMessage(cur.Message)
		if err != nil {
			return channelstate.CallUpdate{}, err
		}
		confirm := channels.OptionsOf[Options](msg).Confirm
		confirmed := confirm && cb.Status == CallbackAnswered && len(cb.Digits) > 0 && cb.Digits[0] == '1'
		if confirmed {
			status = StatusConfirmed
		}
		u := channelstate.CallUpdate{Status: status, AnsweredBy: cb.AnsweredBy, ProviderCallID: cb.CallID,
			Digits: cb.Digits, Confirmed: confirmed, Error: cb.Error}
		if retry && cur.Attempts < cur.MaxAttempts {
			u.RetryAfterSeconds = cur.RetryIntervalSeconds
		}
		return u, nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return row, ErrUnknownCall
	}
	return row, err
}

// Get returns the call of tenant with key.
func (c *Calls) Get(ctx context.Context, tenant, key string) (Call, error) {
	return c.store().Get(ctx, tenant, key)
}

// ClaimDue takes up to limit calls of the tenant's alert (alertID nil: calls
// without an alert) whose retry time has come, marks them Redialing and
// returns their messages with the next attempt number set.
func (c *Calls) ClaimDue(ctx context.Context, tenant string, alertID *int64, limit int) ([]channels.Message, error) {
	rows, err := c.store().ClaimDue(ctx, tenant, alertID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]channels.Message, 0, len(rows))
	for _, r := range rows {
		m, err := decodeMessage(r.Message)
		if err != nil {
			return nil, err
		}
		o := channels.OptionsOf[Options](m)
		o.Attempt = r.Attempts + 1
		m.Options = o
		out = append(out, m)
	}
	return out, nil
}

// Fail marks a call Failed with the reason.
func (c *Calls) Fail(ctx context.Context, tenant, key, reason string) error {
	return c.store().Fail(ctx, tenant, key, reason)
}

// Pending counts the alert's calls that are not final yet.
func (c *Calls) Pending(ctx context.Context, tenant string, alertID *int64) (int, error) {
	return c.store().Pending(ctx, tenant, alertID)
}

// RingWindow is how long after it was dialled a call whose outcome has not
// come back is still waited for, as long as an ETN call holds its slot.
const RingWindow = 10 * time.Minute

// Outlook returns what is still to come of the alert's calls: how many
// dialled within ringWindow ring still, and when the next redial is due.
func (c *Calls) Outlook(ctx context.Context, tenant string, alertID int64, ringWindow time.Duration) (channelstate.CallOutlook, error) {
	return c.store().Outlook(ctx, tenant, alertID, ringWindow)
}

// Redial dials again up to limit due calls of the tenant's alert (nil: of
// every alert of the tenant), each through the Sender that senderFor gives
// its channel (voice or ETN), and returns how many it requested. A call
// whose Sender cannot be had, or whose new request fails, is marked Failed.
func Redial(ctx context.Context, calls *Calls, senderFor func(channels.Channel) (channels.Sender, error), tenant string, alertID *int64, limit int) (int, error) {
	msgs, err := calls.ClaimDue(ctx, tenant, alertID, limit)
	if err != nil {
		return 0, err
	}
	by := map[channels.Channel][]channels.Message{}
	for _, m := range msgs {
		by[m.Channel] = append(by[m.Channel], m)
	}
	n := 0
	for ch, ms := range by {
		snd, err := senderFor(ch)
		var res []channels.Result
		if err == nil {
			res, err = snd.Send(ctx, ms)
		}
		for i, m := range ms {
			reason := ""
			switch {
			case err != nil:
				reason = err.Error()
			case i < len(res) && res[i].Outcome == channels.Failed:
				reason = res[i].Error
			}
			if reason == "" {
				n++
				continue
			}
			if ferr := calls.Fail(ctx, tenant, m.Key, reason); ferr != nil {
				return n, ferr
			}
		}
	}
	return n, nil
}
