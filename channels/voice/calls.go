package voice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
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
type Call struct {
	Tenant         string     `db:"tenant_id"`
	Key            string     `db:"call_key"`
	Channel        string     `db:"channel"`
	AlertID        *int64     `db:"alert_id"`
	Recipient      string     `db:"recipient"`
	ProviderCallID string     `db:"provider_call_id"`
	Status         string     `db:"status"`
	AnsweredBy     string     `db:"answered_by"`
	Digits         string     `db:"digits"`
	ConfirmedAt    *time.Time `db:"confirmed_at"`
	Attempts       int        `db:"attempts"`
	MaxAttempts    int        `db:"max_attempts"`
	NextAttemptAt  *time.Time `db:"next_attempt_at"`
	Error          string     `db:"error"`
	UpdatedAt      time.Time  `db:"updated_at"`
}

// Final reports whether nothing more will happen to the call.
func (c Call) Final() bool {
	return c.NextAttemptAt == nil && c.Status != StatusRequested && c.Status != StatusRedialing
}

// Errors of Record.
var (
	// ErrUnknownCall: no call of the tenant and channel has the reference.
	ErrUnknownCall = errors.New("no such call")
	// ErrStaleCallback: the callback is about an earlier attempt of the call.
	ErrStaleCallback = errors.New("callback of an earlier attempt")
	// ErrBadCallback: the callback's status is not one we know.
	ErrBadCallback = errors.New("unknown callback status")
)

// Calls is the PostgreSQL record of calls.
type Calls struct {
	DB *storage.DB
}

var _ CallLog = (*Calls)(nil)

const callColumns = `tenant_id, call_key, channel, alert_id, recipient, provider_call_id, status, answered_by, digits,
	confirmed_at, attempts, max_attempts, next_attempt_at, error, updated_at`

// Prepare records that attempt of msg is about to be requested.
func (c *Calls) Prepare(ctx context.Context, msg channels.Message, ch channels.Channel, attempt int) error {
	stored := msg
	stored.Attachments = nil
	body, err := json.Marshal(stored)
	if err != nil {
		return fmt.Errorf("encode call: %w", err)
	}
	var alertID *int64
	if v, err := strconv.ParseInt(msg.Metadata[channels.MetaAlertID], 10, 64); err == nil {
		alertID = &v
	}
	_, err = c.DB.ExecContext(ctx, `
		INSERT INTO voice_calls (tenant_id, call_key, channel, alert_id, recipient, message,
			status, attempts, max_attempts, retry_interval_s)
		VALUES ($1, $2, $3, $4, $5, $6, 'Requested', $7, $8, $9)
		ON CONFLICT (tenant_id, call_key) DO UPDATE SET
			earlier_call_ids = CASE WHEN excluded.attempts > voice_calls.attempts AND voice_calls.provider_call_id <> ''
				THEN array_append(voice_calls.earlier_call_ids, voice_calls.provider_call_id) ELSE voice_calls.earlier_call_ids END,
			provider_call_id = CASE WHEN excluded.attempts > voice_calls.attempts THEN '' ELSE voice_calls.provider_call_id END,
			status = CASE WHEN excluded.attempts > voice_calls.attempts OR voice_calls.provider_call_id = ''
				THEN 'Requested' ELSE voice_calls.status END,
			next_attempt_at = NULL,
			attempts = GREATEST(voice_calls.attempts, excluded.attempts), updated_at = now()`,
		msg.Tenant, msg.Key, string(ch), alertID, msg.To, body, attempt,
		intMeta(msg.Metadata, MetaMaxAttempts, 1, 1, 10), intMeta(msg.Metadata, MetaRetryIntervalSeconds, 300, 30, 3600))
	if err != nil {
		return fmt.Errorf("record call: %w", err)
	}
	return nil
}

// Placed records the provider's id of the call's current attempt.
func (c *Calls) Placed(ctx context.Context, tenant, key, providerCallID string) error {
	_, err := c.DB.ExecContext(ctx, `UPDATE voice_calls SET provider_call_id = $3, updated_at = now()
		WHERE tenant_id = $1 AND call_key = $2 AND provider_call_id = ''`, tenant, key, providerCallID)
	if err != nil {
		return fmt.Errorf("record call id: %w", err)
	}
	return nil
}

// Record applies a status callback to the call it references and returns the
// call as it is now. A busy or unanswered call with attempts left is
// scheduled to be dialled again after its retry interval.
func (c *Calls) Record(ctx context.Context, tenant string, ch channels.Channel, cb Callback) (Call, error) {
	var call Call
	err := c.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var cur struct {
			Call
			Confirm  bool           `db:"confirm"`
			Interval int            `db:"retry_interval_s"`
			Earlier  pq.StringArray `db:"earlier_call_ids"`
		}
		err := tx.GetContext(ctx, &cur, `SELECT `+callColumns+`, retry_interval_s, earlier_call_ids,
				coalesce(message->'Metadata'->>'voice.confirm', '') = 'true' AS confirm
			FROM voice_calls WHERE tenant_id = $1 AND channel = $2 AND call_key = $3 FOR UPDATE`,
			tenant, string(ch), cb.Reference)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrUnknownCall
		}
		if err != nil {
			return fmt.Errorf("load call: %w", err)
		}
		call = cur.Call
		if slices.Contains(cur.Earlier, cb.CallID) || (cur.ProviderCallID != "" && cb.CallID != cur.ProviderCallID) {
			return ErrStaleCallback
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
			return ErrBadCallback
		}
		confirmed := cur.Confirm && cb.Status == CallbackAnswered && len(cb.Digits) > 0 && cb.Digits[0] == '1'
		if confirmed {
			status = StatusConfirmed
		}
		retry = retry && cur.Attempts < cur.MaxAttempts
		return tx.GetContext(ctx, &call, `
			UPDATE voice_calls SET status = $4, answered_by = $5, provider_call_id = $11,
				digits = CASE WHEN $6 = '' THEN digits ELSE $6 END,
				confirmed_at = CASE WHEN $7 THEN coalesce(confirmed_at, now()) ELSE confirmed_at END,
				next_attempt_at = CASE WHEN $8 THEN now() + make_interval(secs => $9) END,
				error = $10, updated_at = now()
			WHERE tenant_id = $1 AND channel = $2 AND call_key = $3
			RETURNING `+callColumns,
			tenant, string(ch), cb.Reference, status, cb.AnsweredBy, cb.Digits, confirmed, retry, cur.Interval, cb.Error, cb.CallID)
	})
	return call, err
}

// Get returns the call of tenant with key.
func (c *Calls) Get(ctx context.Context, tenant, key string) (Call, error) {
	var call Call
	err := c.DB.GetContext(ctx, &call, `SELECT `+callColumns+` FROM voice_calls WHERE tenant_id = $1 AND call_key = $2`, tenant, key)
	if err != nil {
		return call, fmt.Errorf("load call: %w", storage.NotFound(err))
	}
	return call, nil
}

// ClaimDue takes up to limit calls of the tenant's alert (alertID nil: calls
// without an alert) whose retry time has come, marks them Redialing and
// returns their messages with the next attempt number set.
func (c *Calls) ClaimDue(ctx context.Context, tenant string, alertID *int64, limit int) ([]channels.Message, error) {
	var rows []struct {
		Message  []byte `db:"message"`
		Attempts int    `db:"attempts"`
	}
	err := c.DB.SelectContext(ctx, &rows, `
		UPDATE voice_calls v SET next_attempt_at = NULL, status = 'Redialing', updated_at = now()
		FROM (SELECT tenant_id, call_key FROM voice_calls
			WHERE tenant_id = $1 AND alert_id IS NOT DISTINCT FROM $2 AND next_attempt_at <= now()
			ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED) d
		WHERE v.tenant_id = d.tenant_id AND v.call_key = d.call_key
		RETURNING v.message, v.attempts`, tenant, alertID, limit)
	if err != nil {
		return nil, fmt.Errorf("claim due calls: %w", err)
	}
	out := make([]channels.Message, 0, len(rows))
	for _, r := range rows {
		var m channels.Message
		if err := json.Unmarshal(r.Message, &m); err != nil {
			return nil, fmt.Errorf("decode call: %w", err)
		}
		if m.Metadata == nil {
			m.Metadata = map[string]string{}
		}
		m.Metadata[MetaAttempt] = strconv.Itoa(r.Attempts + 1)
		out = append(out, m)
	}
	return out, nil
}

// Fail marks a call Failed with the reason.
func (c *Calls) Fail(ctx context.Context, tenant, key, reason string) error {
	_, err := c.DB.ExecContext(ctx, `UPDATE voice_calls SET status = 'Failed', next_attempt_at = NULL, error = $3, updated_at = now()
		WHERE tenant_id = $1 AND call_key = $2`, tenant, key, reason)
	if err != nil {
		return fmt.Errorf("fail call: %w", err)
	}
	return nil
}

// Pending counts the alert's calls that are not final yet.
func (c *Calls) Pending(ctx context.Context, tenant string, alertID *int64) (int, error) {
	var n int
	err := c.DB.GetContext(ctx, &n, `SELECT count(*) FROM voice_calls
		WHERE tenant_id = $1 AND alert_id IS NOT DISTINCT FROM $2
		AND (next_attempt_at IS NOT NULL OR status IN ('Requested', 'Redialing'))`, tenant, alertID)
	if err != nil {
		return 0, fmt.Errorf("count pending calls: %w", err)
	}
	return n, nil
}

// Redial dials again up to limit due calls of the tenant's alert through
// snd and returns how many it requested. A call whose new request fails is
// marked Failed.
func Redial(ctx context.Context, calls *Calls, snd channels.Sender, tenant string, alertID *int64, limit int) (int, error) {
	msgs, err := calls.ClaimDue(ctx, tenant, alertID, limit)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	res, err := snd.Send(ctx, msgs)
	if err != nil {
		for _, m := range msgs {
			_ = calls.Fail(ctx, tenant, m.Key, err.Error())
		}
		return 0, fmt.Errorf("redial: %w", err)
	}
	n := 0
	for i, r := range res {
		if r.Outcome == channels.Failed {
			if err := calls.Fail(ctx, tenant, msgs[i].Key, r.Error); err != nil {
				return n, err
			}
			continue
		}
		n++
	}
	return n, nil
}
