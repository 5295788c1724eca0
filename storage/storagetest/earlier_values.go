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

// StorePersonName writes the first, middle and last name of the tenant's
// person id as given, unchecked, as versions before internal/names' rule
// could store them (a bidirectional control or an invisible character
// included). Tests use it to check what becomes of such names.
func StorePersonName(ctx context.Context, q sqlx.ExecerContext, tenant string, id int64, first, middle, last string) error {
	res, err := q.ExecContext(ctx, `UPDATE people SET first_name = $3, middle_name = $4, last_name = $5 WHERE tenant_id = $1 AND id = $2`,
		tenant, id, first, middle, last)
	if err != nil {
		return fmt.Errorf("store person name: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return storage.ErrNotFound
	}
	return nil
}
