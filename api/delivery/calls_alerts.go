package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
)

// applyCall carries a call's status into its alert delivery row: an
// answered call is a receipt (Delivered), a press-1 confirmation also
// confirms the recipient, a call that ended without being answered and will
// not be redialled fails the delivery. Calls that are not an alert's
// deliveries (another key shape) change nothing.
func applyCall(ctx context.Context, db *storage.DB, call voice.Call) error {
	tenant, alertID, ch, cycle, seq, err := alert.ParseDeliveryKey(call.Key)
	if err != nil || tenant != call.Tenant {
		return nil
	}
	now := time.Now().UTC()
	return db.InTx(ctx, func(tx *sqlx.Tx) error {
		var bs int64
		if err := tx.GetContext(ctx, &bs, `SELECT batch_size FROM alerts WHERE tenant_id = $1 AND id = $2`, tenant, alertID); err != nil {
			return fmt.Errorf("read batch size: %w", err)
		}
		var batch *storage.BatchKey
		if bs > 0 {
			lo := (seq - 1) / bs * bs
			batch = &storage.BatchKey{Tenant: tenant, AlertID: alertID, Channel: ch, Cycle: cycle, Lo: lo, Hi: lo + bs}
			// Wait for the batch's rows if it is being written now.
			if err := storage.LockBatch(ctx, tx, *batch); err != nil {
				return err
			}
		}
		var res interface{ RowsAffected() (int64, error) }
		var err error
		switch {
		case call.Status == voice.StatusAnswered || call.Status == voice.StatusConfirmed:
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Delivered', delivered_at = coalesce(delivered_at, $6), updated_at = now()
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Delivered', 'Retrying')`,
				tenant, alertID, ch, cycle, seq, now)
		case call.Final():
			reason := call.Error
			if reason == "" {
				reason = "the call ended " + call.Status
			}
			res, err = tx.ExecContext(ctx, `UPDATE alert_deliveries SET status = 'Failed', error = $6, updated_at = now()
				WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND seq = $5 AND status IN ('Sent', 'Retrying')`,
				tenant, alertID, ch, cycle, seq, reason)
		default:
			return nil
		}
		if err != nil {
			return fmt.Errorf("apply call status: %w", err)
		}
		if ch == "etn" {
			if err := applyEtnTarget(ctx, tx, call, tenant, alertID, seq, now); err != nil {
				return err
			}
		}
		if n, _ := res.RowsAffected(); n > 0 && batch != nil {
			if err := storage.RecountBatch(ctx, tx, *batch); err != nil {
				return err
			}
		}
		if call.Status != voice.StatusConfirmed {
			return nil
		}
		var personID *int64
		err = tx.GetContext(ctx, &personID, `UPDATE alert_recipients SET confirmed_at = $4
			WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 AND confirmed_at IS NULL RETURNING person_id`, alertID, tenant, seq, now)
		if storage.NotFound(err) == storage.ErrNotFound {
			return nil // already confirmed
		}
		if err != nil {
			return fmt.Errorf("confirm recipient: %w", err)
		}
		_, err = storage.EmitEvent(ctx, tx, tenant, storage.EventRecipientResponded, events.RecipientResponded{
			AlertID: alertID, RecipientID: seq, ContactID: personID, Confirmed: true, Via: ch, RespondedAt: now})
		return err
	})
}

// applyEtnTarget carries a call's status to the ETN target it called (ETN
// alerts with areas call targets, not recipients).
func applyEtnTarget(ctx context.Context, tx *sqlx.Tx, call voice.Call, tenant string, alertID, seq int64, now time.Time) error {
	var err error
	switch {
	case call.Status == voice.StatusAnswered || call.Status == voice.StatusConfirmed:
		_, err = tx.ExecContext(ctx, `UPDATE alert_etn_targets SET status = 'Delivered', delivered_at = coalesce(delivered_at, $4), updated_at = now()
			WHERE tenant_id = $1 AND alert_id = $2 AND seq = $3 AND status IN ('Sent', 'Delivered', 'Retrying')`, tenant, alertID, seq, now)
	case call.Final():
		_, err = tx.ExecContext(ctx, `UPDATE alert_etn_targets SET status = 'Failed', error = $4, updated_at = now()
			WHERE tenant_id = $1 AND alert_id = $2 AND seq = $3 AND status IN ('Sent', 'Retrying')`, tenant, alertID, seq, "the call ended "+call.Status)
	}
	if err != nil {
		return fmt.Errorf("apply etn call status: %w", err)
	}
	return nil
}
