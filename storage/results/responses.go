package results

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
)

// HasRecipient reports whether an alert has recipient seq.
func (s *Store) HasRecipient(ctx context.Context, tenant string, alertID, seq int64) (bool, error) {
	var n int
	if err := s.DB.GetContext(ctx, &n, `SELECT count(*) FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3`,
		alertID, tenant, seq); err != nil {
		return false, fmt.Errorf("look up recipient: %w", err)
	}
	return n > 0, nil
}

// RecipientAnswers returns a recipient's poll answers by question and
// whether the recipient confirmed.
func (s *Store) RecipientAnswers(ctx context.Context, tenant string, alertID, seq int64) ([]Answer, bool, error) {
	return recipientAnswers(ctx, s.DB, tenant, alertID, seq)
}

func recipientAnswers(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID, seq int64) ([]Answer, bool, error) {
	var out []Answer
	if err := sqlx.SelectContext(ctx, q, &out, `SELECT seq, question_id, option_id, via, responded_at FROM alert_responses
		WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 ORDER BY question_id`, alertID, tenant, seq); err != nil {
		return nil, false, fmt.Errorf("read answers: %w", err)
	}
	var confirmed bool
	if err := sqlx.GetContext(ctx, q, &confirmed, `SELECT confirmed_at IS NOT NULL FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3`,
		alertID, tenant, seq); err != nil {
		return nil, false, fmt.Errorf("read confirmation: %w", err)
	}
	return out, confirmed, nil
}

// Response is a recipient's response through the personal link: a
// confirmation, or an answer to a poll question (which confirms too).
type Response struct {
	Tenant   string
	AlertID  int64
	Seq      int64
	Question int // 0 for a confirmation
	Option   int
	// OptionText goes into the event.
	OptionText string
	At         time.Time
}

// A recipient's link may change answers it already gave at most
// AnswerChangeBurst times at once, and regains one change every
// AnswerChangeInterval up to that many: a recipient changing their mind a
// few times is not held back, while whoever holds a link cannot turn it
// into an unbounded stream of events, hook deliveries and writes (at most
// AnswerChangeBurst changes, then one per AnswerChangeInterval). A first
// answer to each question and the confirmation, each given once, are not
// counted.
const (
	AnswerChangeBurst    = 5
	AnswerChangeInterval = 5 * time.Minute
)

// ChangeLimitedError refuses a change of answer of a link that has used
// its allowance (AnswerChangeBurst); RetryAfter is when it has one change
// again. Nothing was written.
type ChangeLimitedError struct{ RetryAfter time.Duration }

func (e *ChangeLimitedError) Error() string {
	return fmt.Sprintf("the link changed its answers too often; retry after %s", e.RetryAfter)
}

// spendChange takes one change from the allowance of a link that has it
// whole again at fullAt (nil: it has it now), at now: it returns when the
// link will have it whole again, or how long it must wait for a change.
func spendChange(fullAt *time.Time, now time.Time) (time.Time, time.Duration) {
	from := now
	if fullAt != nil && fullAt.After(now) {
		from = *fullAt
	}
	next := from.Add(AnswerChangeInterval)
	if wait := next.Sub(now) - AnswerChangeBurst*AnswerChangeInterval; wait > 0 {
		return time.Time{}, wait
	}
	return next, 0
}

// Respond records a response and, when it changes something (a first
// confirmation, or an answer the question did not have), its
// alert.recipient.responded event, in one transaction, and returns the
// recipient's answers and confirmation as they are then. The same response
// again changes nothing, its time included, and emits nothing, as a
// confirmation by call does: whoever holds a recipient's link cannot turn
// one response into as many events and hook deliveries as requests. A
// change of an answer already given spends the link's allowance
// (AnswerChangeBurst); past it, the change is a *ChangeLimitedError and
// nothing is written, so the answers stay the last ones accepted.
func (s *Store) Respond(ctx context.Context, r Response) ([]Answer, bool, error) {
	var answers []Answer
	var confirmed bool
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var rec struct {
			PersonID  *int64     `db:"person_id"`
			Confirmed bool       `db:"confirmed"`
			FullAt    *time.Time `db:"answer_changes_full_at"`
			Now       time.Time  `db:"now"`
		}
		if err := tx.GetContext(ctx, &rec, `SELECT person_id, confirmed_at IS NOT NULL AS confirmed, answer_changes_full_at, now() AS now
			FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 FOR UPDATE`, r.AlertID, r.Tenant, r.Seq); err != nil {
			return fmt.Errorf("record response: %w", err)
		}
		changed, fullAt := !rec.Confirmed, rec.FullAt
		if r.Question > 0 {
			var given int
			err := tx.GetContext(ctx, &given, `SELECT option_id FROM alert_responses
				WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 AND question_id = $4`, r.AlertID, r.Tenant, r.Seq, r.Question)
			switch err = storage.NotFound(err); {
			case errors.Is(err, storage.ErrNotFound):
				changed = true
			case err != nil:
				return fmt.Errorf("read answer: %w", err)
			case given == r.Option:
				changed = false
			default:
				next, wait := spendChange(rec.FullAt, rec.Now)
				if wait > 0 {
					return &ChangeLimitedError{RetryAfter: wait}
				}
				changed, fullAt = true, &next
			}
		}
		if changed {
			if err := recordResponse(ctx, tx, r, rec.PersonID, fullAt); err != nil {
				return err
			}
		}
		var err error
		answers, confirmed, err = recipientAnswers(ctx, tx, r.Tenant, r.AlertID, r.Seq)
		return err
	})
	return answers, confirmed, err
}

// recordResponse writes r, which changes something, with its event: the
// answer, the recipient's confirmation and response time, and when the
// link has its whole allowance of changes again (fullAt).
func recordResponse(ctx context.Context, tx *sqlx.Tx, r Response, personID *int64, fullAt *time.Time) error {
	if r.Question > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO alert_responses (tenant_id, alert_id, seq, question_id, option_id, via, responded_at)
			VALUES ($1, $2, $3, $4, $5, 'link', $6)
			ON CONFLICT (alert_id, seq, question_id) DO UPDATE SET option_id = excluded.option_id, responded_at = excluded.responded_at`,
			r.Tenant, r.AlertID, r.Seq, r.Question, r.Option, r.At); err != nil {
			return fmt.Errorf("record answer: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE alert_recipients SET confirmed_at = coalesce(confirmed_at, $4),
			responded_at = CASE WHEN $5 THEN $4 ELSE responded_at END, answer_changes_full_at = $6
		WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3`,
		r.AlertID, r.Tenant, r.Seq, r.At, r.Question > 0, fullAt); err != nil {
		return fmt.Errorf("record response: %w", err)
	}
	ev := events.RecipientResponded{AlertID: r.AlertID, RecipientID: r.Seq, ContactID: personID, Confirmed: true, Via: "link", RespondedAt: r.At}
	if r.Question > 0 {
		q, o, text := int64(r.Question), int64(r.Option), r.OptionText
		ev.QuestionID, ev.OptionID, ev.OptionText = &q, &o, &text
	}
	_, err := storage.EmitEvent(ctx, tx, r.Tenant, storage.EventRecipientResponded, ev)
	return err
}

// DeliveryRef names one delivery: a recipient of an alert on a channel in a cycle.
type DeliveryRef struct {
	Tenant  string
	AlertID int64
	Channel string
	Cycle   int
	Seq     int64
	// WorkflowID, when not empty, is the workflow id of the alert the
	// delivery's key names (alert.Key): a report on a delivery of another
	// alert that had the same id (before the database was restored from a
	// backup) changes nothing.
	WorkflowID string
}

// ofTheAlert reports whether d's alert is the one d names: always when d
// names no workflow id, else when the alert stored is of that workflow.
func ofTheAlert(ctx context.Context, tx *sqlx.Tx, d DeliveryRef) (bool, error) {
	if d.WorkflowID == "" {
		return true, nil
	}
	var n int
	if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM alerts WHERE tenant_id = $1 AND id = $2 AND workflow_id = $3`,
		d.Tenant, d.AlertID, d.WorkflowID); err != nil {
		return false, fmt.Errorf("read alert workflow: %w", err)
	}
	return n > 0, nil
}

// Receipt is a provider's report on one delivery.
type Receipt struct {
	Delivered bool
	// At is when it was delivered.
	At                time.Time
	ProviderMessageID string // replaces the stored one when not empty
	// Error is why it failed.
	Error string
}

// ApplyReceipt carries a receipt into a sent delivery (a delivered one may
// be delivered again, a failed one fail again) and recounts its batch. It
// reports whether a delivery changed.
func (s *Store) ApplyReceipt(ctx context.Context, d DeliveryRef, r Receipt) (bool, error) {
	applied := false
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if ok, err := ofTheAlert(ctx, tx, d); !ok || err != nil {
			return err
		}
		var res interface{ RowsAffected() (int64, error) }
		var err error
		if r.Delivered {
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Delivered', delivered_at = $6, updated_at = now(),
				provider_message_id = CASE WHEN $7 = '' THEN provider_message_id ELSE $7 END
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Delivered')`,
				d.Tenant, d.AlertID, d.Channel, d.Cycle, d.Seq, r.At, r.ProviderMessageID)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Failed', error = $6, permanent = true, updated_at = now()
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Failed')`,
				d.Tenant, d.AlertID, d.Channel, d.Cycle, d.Seq, r.Error)
		}
		if err != nil {
			return fmt.Errorf("apply receipt: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		applied = true
		batch, err := batchOf(ctx, tx, d)
		if err != nil || batch == nil {
			return err
		}
		return storage.RecountBatch(ctx, tx, *batch)
	})
	return applied, err
}

// batchOf returns the batch of a delivery, nil when its alert was not split
// into batches (yet).
func batchOf(ctx context.Context, tx *sqlx.Tx, d DeliveryRef) (*storage.BatchKey, error) {
	var bs int64
	if err := tx.GetContext(ctx, &bs, `SELECT batch_size FROM alerts WHERE tenant_id = $1 AND id = $2`, d.Tenant, d.AlertID); err != nil {
		return nil, fmt.Errorf("read batch size: %w", err)
	}
	if bs <= 0 {
		return nil, nil
	}
	lo := (d.Seq - 1) / bs * bs
	return &storage.BatchKey{Tenant: d.Tenant, AlertID: d.AlertID, Channel: d.Channel, Cycle: d.Cycle, Lo: lo, Hi: lo + bs}, nil
}

// CallOutcome is what a voice call that delivered an alert came to.
type CallOutcome struct {
	// Answered: the delivery is Delivered.
	Answered bool
	// Confirmed: the recipient pressed 1, which also confirms the recipient.
	Confirmed bool
	// Ended without an answer and will not be redialled: the delivery
	// fails with Error, an ETN target with TargetError.
	Ended              bool
	Error, TargetError string
	At                 time.Time
}

// ApplyCall carries a call's outcome into its delivery (and for ETN into
// the target called), recounts the delivery's batch, and for a
// confirmation confirms the recipient with an alert.recipient.responded
// event. It waits for the batch's rows when they are being written.
func (s *Store) ApplyCall(ctx context.Context, d DeliveryRef, c CallOutcome) error {
	return s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if ok, err := ofTheAlert(ctx, tx, d); !ok || err != nil {
			return err
		}
		batch, err := batchOf(ctx, tx, d)
		if err != nil {
			return err
		}
		if batch != nil {
			// Wait for the batch's rows if it is being written now.
			if err := storage.LockBatch(ctx, tx, *batch); err != nil {
				return err
			}
		}
		var res interface{ RowsAffected() (int64, error) }
		switch {
		case c.Answered || c.Confirmed:
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Delivered', delivered_at = coalesce(delivered_at, $6), updated_at = now()
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Delivered', 'Retrying')`,
				d.Tenant, d.AlertID, d.Channel, d.Cycle, d.Seq, c.At)
		case c.Ended:
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Failed', error = $6, updated_at = now()
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Retrying')`,
				d.Tenant, d.AlertID, d.Channel, d.Cycle, d.Seq, c.Error)
		default:
			return nil
		}
		if err != nil {
			return fmt.Errorf("apply call status: %w", err)
		}
		if d.Channel == "etn" {
			if err := applyEtnTarget(ctx, tx, d, c); err != nil {
				return err
			}
		}
		if n, _ := res.RowsAffected(); n > 0 && batch != nil {
			if err := storage.RecountBatch(ctx, tx, *batch); err != nil {
				return err
			}
		}
		if !c.Confirmed {
			return nil
		}
		var personID *int64
		err = tx.GetContext(ctx, &personID, `UPDATE alert_recipients SET confirmed_at = $4
			WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 AND confirmed_at IS NULL RETURNING person_id`, d.AlertID, d.Tenant, d.Seq, c.At)
		if storage.NotFound(err) == storage.ErrNotFound {
			return nil // already confirmed
		}
		if err != nil {
			return fmt.Errorf("confirm recipient: %w", err)
		}
		_, err = storage.EmitEvent(ctx, tx, d.Tenant, storage.EventRecipientResponded, events.RecipientResponded{
			AlertID: d.AlertID, RecipientID: d.Seq, ContactID: personID, Confirmed: true, Via: d.Channel, RespondedAt: c.At})
		return err
	})
}

// applyEtnTarget carries a call's outcome to the ETN target it called (ETN
// alerts with areas call targets, not recipients).
func applyEtnTarget(ctx context.Context, tx *sqlx.Tx, d DeliveryRef, c CallOutcome) error {
	var err error
	switch {
	case c.Answered || c.Confirmed:
		_, err = tx.ExecContext(ctx, `UPDATE alert_etn_targets SET status = 'Delivered', delivered_at = coalesce(delivered_at, $4), updated_at = now()
			WHERE tenant_id = $1 AND alert_id = $2 AND seq = $3 AND status IN ('Sent', 'Delivered', 'Retrying')`, d.Tenant, d.AlertID, d.Seq, c.At)
	case c.Ended:
		_, err = tx.ExecContext(ctx, `UPDATE alert_etn_targets SET status = 'Failed', error = $4, updated_at = now()
			WHERE tenant_id = $1 AND alert_id = $2 AND seq = $3 AND status IN ('Sent', 'Retrying')`, d.Tenant, d.AlertID, d.Seq, c.TargetError)
	}
	if err != nil {
		return fmt.Errorf("apply etn call status: %w", err)
	}
	return nil
}
