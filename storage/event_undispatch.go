package storage

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// UndoDispatchForTest marks the tenant's event as not dispatched again, as
// if the dispatcher had died after delivering it but before recording that.
// Only tests use it: no user action undoes a dispatch.
func UndoDispatchForTest(ctx context.Context, q sqlx.ExecerContext, tenant, eventID string) error {
	res, err := q.ExecContext(ctx, `UPDATE events SET dispatched_at = NULL WHERE tenant_id = $1 AND id = $2`, tenant, eventID)
	if err != nil {
		return fmt.Errorf("undo dispatch: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrNotFound
	}
	return nil
}
