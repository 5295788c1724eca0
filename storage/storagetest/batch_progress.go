package storagetest

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// LeaveBatchProgress records progress as the batch's whatever its alert's
// state, as versions before storage.SaveBatchProgress stopped at the end
// of the alert could leave it after the end.
func LeaveBatchProgress(ctx context.Context, q sqlx.ExecerContext, k storage.BatchKey, progress []byte) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO alert_batch_progress (tenant_id, alert_id, channel, cycle, lo, hi, sent)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi, string(progress)); err != nil {
		return fmt.Errorf("leave batch progress: %w", err)
	}
	return nil
}

// AgeBatchProgress makes what the tenant's alert's batches recorded of
// their progress older by age, as if it had been written that long
// before, so tests need not wait for storage.BatchProgressMaxAge. An
// alert whose batches recorded nothing is storage.ErrNotFound.
func AgeBatchProgress(ctx context.Context, q sqlx.ExecerContext, tenant string, alertID int64, age time.Duration) error {
	res, err := q.ExecContext(ctx, `UPDATE alert_batch_progress SET updated_at = updated_at - make_interval(secs => $3)
		WHERE tenant_id = $1 AND alert_id = $2`, tenant, alertID, age.Seconds())
	if err != nil {
		return fmt.Errorf("age batch progress: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return storage.ErrNotFound
	}
	return nil
}
