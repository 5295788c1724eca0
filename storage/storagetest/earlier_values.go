package storagetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// StorePersonLocale writes the language and time zone of the tenant's
// person id as given, unchecked, as versions before internal/locale's
// rule could store them (their contacts import took Local and any
// well-formed language tag). Tests use it to check what becomes of such
// values.
func StorePersonLocale(ctx context.Context, q sqlx.ExecerContext, tenant string, id int64, language, zone string) error {
	res, err := q.ExecContext(ctx, `UPDATE people SET language = $3, time_zone = $4 WHERE tenant_id = $1 AND id = $2`, tenant, id, language, zone)
	if err != nil {
		return fmt.Errorf("store person locale: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return storage.ErrNotFound
	}
	return nil
}
