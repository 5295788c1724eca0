package storagetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// PlainHookHeaders stores the custom headers of the tenant's subscription id
// as versions before sealed headers did: a plain JSON object, nothing
// sealed. Only tests use it, to check what becomes of such rows.
func PlainHookHeaders(ctx context.Context, q sqlx.ExecerContext, tenant string, id int64, headers string) error {
	res, err := q.ExecContext(ctx, `UPDATE hook_subscriptions SET headers = $3::jsonb, headers_encrypted = NULL
		WHERE tenant_id = $1 AND id = $2`, tenant, id, headers)
	if err != nil {
		return fmt.Errorf("store plain headers: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return storage.ErrNotFound
	}
	return nil
}
