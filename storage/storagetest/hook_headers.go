package storagetest

import (
	"context"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

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

// OldVersionHookHeaders changes the custom headers of the tenant's
// subscription id as an instance of a version before sealed headers does
// during a rolling upgrade: it writes the plain JSON object and leaves the
// sealed headers as they are.
func OldVersionHookHeaders(ctx context.Context, q sqlx.ExecerContext, tenant string, id int64, headers string) error {
	return execOne(ctx, q, `UPDATE hook_subscriptions SET headers = $3::jsonb, updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenant, id, headers)
}

// DamageHookHeaders replaces the sealed custom headers of the tenant's
// subscription id with sealed, as a row sealed under another
// TOCSIN_SECRETS_KEY or damaged would hold them.
func DamageHookHeaders(ctx context.Context, q sqlx.ExecerContext, tenant string, id int64, sealed []byte) error {
	return execOne(ctx, q, `UPDATE hook_subscriptions SET headers_encrypted = $3, headers = '{}'
		WHERE tenant_id = $1 AND id = $2`, tenant, id, sealed)
}

func execOne(ctx context.Context, q sqlx.ExecerContext, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store hook headers: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return storage.ErrNotFound
	}
	return nil
}

// AddHookSubscriptions stores n active subscriptions of the tenant to
// types, to url, as rows written before tenants were held to
// hooksubs.MaxPerTenant could be: nothing counts them. Their secrets are
// not sealed, so a delivery to one fails. It returns their ids in order.
func AddHookSubscriptions(ctx context.Context, q sqlx.QueryerContext, tenant string, n int, url string, types ...string) ([]int64, error) {
	ids, err := storage.SelectAll[int64](ctx, q, "add subscriptions", `
		INSERT INTO hook_subscriptions (tenant_id, url, event_types, active, secret_encrypted)
		SELECT $1, $2, $3, true, 'unsealed' FROM generate_series(1, $4) RETURNING id`, tenant, url, pq.StringArray(types), n)
	slices.Sort(ids)
	return ids, err
}
