package channelstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Call is the stored state of one voice or ETN call.
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

// Final reports whether nothing more will happen to the call: no redial
// waits and it is neither Requested nor Redialing.
func (c Call) Final() bool {
	return c.NextAttemptAt == nil && c.Status != "Requested" && c.Status != "Redialing"
}

// NewCall is an attempt of a call about to be requested.
type NewCall struct {
	Tenant    string
	Key       string
	Channel   string
	AlertID   *int64
	Recipient string
	// Message is the call's message as JSON, kept to dial it again.
	Message              []byte
	Attempt              int
	MaxAttempts          int
	RetryIntervalSeconds int
}

// CurrentCall is a call as a status callback finds it.
type CurrentCall struct {
	Call
	// Message is the call's message as JSON (see NewCall).
	Message []byte `db:"message"`
	// RetryIntervalSeconds is how long a busy or unanswered call waits.
	RetryIntervalSeconds int            `db:"retry_interval_s"`
	EarlierCallIDs       pq.StringArray `db:"earlier_call_ids"`
}

// CallUpdate is what a status callback changes on a call.
type CallUpdate struct {
	Status         string
	AnsweredBy     string
	ProviderCallID string
	// Digits replace the stored ones when not empty.
	Digits    string
	Confirmed bool
	// RetryAfterSeconds > 0 schedules the call to be dialled again.
	RetryAfterSeconds int
	Error             string
}

// DueCall is a call claimed to be dialled again.
type DueCall struct {
	Message  []byte `db:"message"`
	Attempts int    `db:"attempts"`
}

// Calls is the PostgreSQL record of calls (voice_calls).
type Calls struct {
	DB *storage.DB
}

const callColumns = `tenant_id, call_key, channel, alert_id, recipient, provider_call_id, status, answered_by, digits,
	confirmed_at, attempts, max_attempts, next_attempt_at, error, updated_at`

// Prepare records that attempt c.Attempt of a call is about to be requested.
func (s *Calls) Prepare(ctx context.Context, c NewCall) error {
	_, err := s.DB.ExecContext(ctx, `
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
		c.Tenant, c.Key, c.Channel, c.AlertID, c.Recipient, c.Message, c.Attempt, c.MaxAttempts, c.RetryIntervalSeconds)
	if err != nil {
		return fmt.Errorf("record call: %w", err)
	}
	return nil
}

// Placed records the provider's id of the call's current attempt.
func (s *Calls) Placed(ctx context.Context, tenant, key, providerCallID string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE voice_calls SET provider_call_id = $3, updated_at = now()
		WHERE tenant_id = $1 AND call_key = $2 AND provider_call_id = ''`, tenant, key, providerCallID)
	if err != nil {
		return fmt.Errorf("record call id: %w", err)
	}
	return nil
}

// Update locks the tenant's call of channel with key, passes it to decide
// and stores the update decide returns, in one transaction, returning the
// call as stored. storage.ErrNotFound when there is no such call; an error
// of decide is returned as it is with nothing changed.
func (s *Calls) Update(ctx context.Context, tenant, channel, key string, decide func(CurrentCall) (CallUpdate, error)) (Call, error) {
	var call Call
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var cur CurrentCall
		err := tx.GetContext(ctx, &cur, `SELECT `+callColumns+`, retry_interval_s, earlier_call_ids, message
			FROM voice_calls WHERE tenant_id = $1 AND channel = $2 AND call_key = $3 FOR UPDATE`,
			tenant, channel, key)
		if errors.Is(err, sql.ErrNoRows) {
			return storage.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("load call: %w", err)
		}
		call = cur.Call
		u, err := decide(cur)
		if err != nil {
			return err
		}
		return tx.GetContext(ctx, &call, `
			UPDATE voice_calls SET status = $4, answered_by = $5, provider_call_id = $11,
				digits = CASE WHEN $6 = '' THEN digits ELSE $6 END,
				confirmed_at = CASE WHEN $7 THEN coalesce(confirmed_at, now()) ELSE confirmed_at END,
				next_attempt_at = CASE WHEN $8 THEN now() + make_interval(secs => $9) END,
				error = $10, updated_at = now()
			WHERE tenant_id = $1 AND channel = $2 AND call_key = $3
			RETURNING `+callColumns,
			tenant, channel, key, u.Status, u.AnsweredBy, u.Digits, u.Confirmed, u.RetryAfterSeconds > 0, u.RetryAfterSeconds, u.Error, u.ProviderCallID)
	})
	return call, err
}

// Get returns the call of tenant with key, or storage.ErrNotFound.
func (s *Calls) Get(ctx context.Context, tenant, key string) (Call, error) {
	var call Call
	err := s.DB.GetContext(ctx, &call, `SELECT `+callColumns+` FROM voice_calls WHERE tenant_id = $1 AND call_key = $2`, tenant, key)
	if err != nil {
		return call, fmt.Errorf("load call: %w", storage.NotFound(err))
	}
	return call, nil
}

// ClaimDue takes up to limit calls of the tenant's alert (alertID nil: calls
// without an alert) whose retry time has come, marks them Redialing and
// returns their messages with the attempts made so far.
func (s *Calls) ClaimDue(ctx context.Context, tenant string, alertID *int64, limit int) ([]DueCall, error) {
	var rows []DueCall
	err := s.DB.SelectContext(ctx, &rows, `
		UPDATE voice_calls v SET next_attempt_at = NULL, status = 'Redialing', updated_at = now()
		FROM (SELECT tenant_id, call_key FROM voice_calls
			WHERE tenant_id = $1 AND alert_id IS NOT DISTINCT FROM $2 AND next_attempt_at <= now()
			ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED) d
		WHERE v.tenant_id = d.tenant_id AND v.call_key = d.call_key
		RETURNING v.message, v.attempts`, tenant, alertID, limit)
	if err != nil {
		return nil, fmt.Errorf("claim due calls: %w", err)
	}
	return rows, nil
}

// Fail marks a call Failed with the reason.
func (s *Calls) Fail(ctx context.Context, tenant, key, reason string) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE voice_calls SET status = 'Failed', next_attempt_at = NULL, error = $3, updated_at = now()
		WHERE tenant_id = $1 AND call_key = $2`, tenant, key, reason)
	if err != nil {
		return fmt.Errorf("fail call: %w", err)
	}
	return nil
}

// Pending counts the alert's calls that are not final yet.
func (s *Calls) Pending(ctx context.Context, tenant string, alertID *int64) (int, error) {
	var n int
	err := s.DB.GetContext(ctx, &n, `SELECT count(*) FROM voice_calls
		WHERE tenant_id = $1 AND alert_id IS NOT DISTINCT FROM $2
		AND (next_attempt_at IS NOT NULL OR status IN ('Requested', 'Redialing'))`, tenant, alertID)
	if err != nil {
		return 0, fmt.Errorf("count pending calls: %w", err)
	}
	return n, nil
}

// CallOutlook is what is still to come of an alert's calls.
type CallOutlook struct {
	// Ringing counts calls dialled within the ring window whose outcome
	// has not come back yet.
	Ringing int `db:"ringing"`
	// NextDue is when the earliest call waiting to be dialled again is
	// due, nil when none waits.
	NextDue *time.Time `db:"next_due"`
}

// Outlook returns what is still to come of the alert's calls. A call
// counts as ringing for ringWindow after it was last dialled: one whose
// outcome has not come back by then (its callback lost, or never able to
// reach us) is not waited for, by this cycle or a later one.
func (s *Calls) Outlook(ctx context.Context, tenant string, alertID int64, ringWindow time.Duration) (CallOutlook, error) {
	var o CallOutlook
	if err := s.DB.GetContext(ctx, &o, `SELECT count(*) FILTER (WHERE next_attempt_at IS NULL AND status IN ('Requested', 'Redialing')
			AND updated_at > now() - make_interval(secs => $3)) AS ringing,
		min(next_attempt_at) AS next_due FROM voice_calls WHERE tenant_id = $1 AND alert_id = $2`, tenant, alertID, ringWindow.Seconds()); err != nil {
		return o, fmt.Errorf("call outlook: %w", err)
	}
	return o, nil
}
