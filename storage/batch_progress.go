package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/alert"
)

// SaveBatchProgress records progress, what a delivery batch run as a local
// activity has sent so far (activities.BatchProgress as JSON), in place of
// what it recorded before. It records nothing once the alert has ended
// (completed_at is set): a save that late comes from an attempt its
// workflow gave up on (one stuck past its timeout, whose retry recorded the
// batch), and the end of the alert (DeleteAlertProgress) has deleted what
// the batches left. Nor does it record anything for another alert than the
// one of k.Tag (the id handed out again after a restore), whose batch of
// the same range would take it for its own. The save holds the alert's
// row (FOR SHARE) so that it either comes before the transaction that ends
// the alert, which then deletes it, or sees the alert ended.
func SaveBatchProgress(ctx context.Context, q sqlx.ExecerContext, k BatchKey, progress []byte) error {
	_, err := q.ExecContext(ctx, `
		INSERT INTO alert_batch_progress AS p (tenant_id, alert_id, channel, cycle, lo, hi, sent)
		SELECT a.tenant_id, a.id, $3, $4, $5, $6, $7 FROM alerts a
		WHERE a.tenant_id = $1 AND a.id = $2 AND a.workflow_id = $8 AND a.completed_at IS NULL
		FOR SHARE OF a
		ON CONFLICT (alert_id, channel, cycle, lo, hi) DO UPDATE SET sent = excluded.sent, updated_at = now()
		WHERE p.tenant_id = excluded.tenant_id`,
		k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi, string(progress), alert.WorkflowID(k.Tenant, k.AlertID, k.Tag))
	if err != nil {
		return fmt.Errorf("save batch progress: %w", err)
	}
	return nil
}

// BatchProgress reads what SaveBatchProgress recorded of the batch, nil
// when nothing.
func BatchProgress(ctx context.Context, q sqlx.QueryerContext, k BatchKey) ([]byte, error) {
	var progress []byte
	err := sqlx.GetContext(ctx, q, &progress, `SELECT sent FROM alert_batch_progress
		WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND lo = $5 AND hi = $6`,
		k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read batch progress: %w", err)
	}
	return progress, nil
}

// DeleteBatchProgress deletes what SaveBatchProgress recorded of the
// batch, in the transaction that records the batch's results.
func DeleteBatchProgress(ctx context.Context, q sqlx.ExecerContext, k BatchKey) error {
	_, err := q.ExecContext(ctx, `DELETE FROM alert_batch_progress
		WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND lo = $5 AND hi = $6`,
		k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi)
	if err != nil {
		return fmt.Errorf("delete batch progress: %w", err)
	}
	return nil
}

// DeleteAlertProgress deletes what the alert's batches recorded with
// SaveBatchProgress and left (a batch whose workflow ended before it
// recorded its results), when the alert ends: in the transaction that
// sets its completed_at, after that, so that no save follows it.
func DeleteAlertProgress(ctx context.Context, q sqlx.ExecerContext, tenant string, alertID int64) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM alert_batch_progress WHERE tenant_id = $1 AND alert_id = $2`, tenant, alertID); err != nil {
		return fmt.Errorf("delete alert progress: %w", err)
	}
	return nil
}

// BatchProgressMaxAge is the age past which the progress of a batch
// (SaveBatchProgress) belongs to no live batch. The row is read by the
// batch's next attempt: the local attempt run again after its worker died
// (the workflow task's 10 s timeout later) or the DeliverBatch activity a
// second after a failed local attempt, whose heartbeat details carry the
// record on. Each attempt lasts at most 5 minutes and attempts are at most
// 30 s apart (workflows' delivery options), so all of a batch's attempts,
// TOCSIN_DELIVERY_MAX_ATTEMPTS of them (5 by default), last about half an
// hour; a day leaves the rest for an attempt that waits for a worker. A
// batch whose workers were all gone for longer sends again what its row
// held, as a batch without the row does.
const BatchProgressMaxAge = 24 * time.Hour

// SweepBatchProgress deletes, for every tenant, up to limit progress rows
// that no batch will read: those of an alert that has ended (whose end
// deleted what its batches had saved then, so these were saved by a
// version before saves stopped at the end) or is gone, and those not
// written for BatchProgressMaxAge (a workflow terminated by hand, or one
// that failed without ending its alert). It returns how many it deleted;
// a caller repeats it while that is limit.
func SweepBatchProgress(ctx context.Context, q sqlx.ExecerContext, limit int) (int64, error) {
	res, err := q.ExecContext(ctx, `DELETE FROM alert_batch_progress WHERE ctid IN (
		SELECT p.ctid FROM alert_batch_progress p
		LEFT JOIN alerts a ON a.tenant_id = p.tenant_id AND a.id = p.alert_id
		WHERE a.id IS NULL OR a.completed_at IS NOT NULL OR p.updated_at < now() - make_interval(secs => $1)
		LIMIT $2 FOR UPDATE OF p SKIP LOCKED)`, BatchProgressMaxAge.Seconds(), limit)
	if err != nil {
		return 0, fmt.Errorf("sweep batch progress: %w", err)
	}
	return res.RowsAffected()
}
