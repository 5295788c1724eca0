package directory

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// AppPush is the person_devices app of devices the push channel reaches.
const AppPush = "push"

const deviceCols = `id, app, platform, token, created_at`

// AddPushDevice registers a push device token to the user. A token already
// registered for push in the tenant (to this user or another) is
// ErrConflict.
func AddPushDevice(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, platform, token string) (Device, error) {
	var d Device
	err := tx.QueryRowxContext(ctx, `
		INSERT INTO person_devices (tenant_id, person_id, app, platform, token) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant_id, app, token) DO NOTHING
		RETURNING `+deviceCols, tenant, person, AppPush, platform, token).Scan(&d.ID, &d.App, &d.Platform, &d.Token, &d.CreatedAt)
	if storage.NotFound(err) == storage.ErrNotFound {
		return d, storage.ErrConflict
	}
	if err != nil {
		return d, fmt.Errorf("insert device: %w", err)
	}
	return d, nil
}

// GetDevice reads one device of the user, whatever its app.
func GetDevice(ctx context.Context, q Querier, tenant string, person, id int64) (Device, error) {
	var d Device
	err := q.QueryRowxContext(ctx, `SELECT `+deviceCols+` FROM person_devices WHERE tenant_id = $1 AND person_id = $2 AND id = $3`,
		tenant, person, id).Scan(&d.ID, &d.App, &d.Platform, &d.Token, &d.CreatedAt)
	return d, storage.NotFound(err)
}

// RemovePushDevice removes one push device of the user; ErrNotFound when
// the user has no push device with that id.
func RemovePushDevice(ctx context.Context, q Querier, tenant string, person, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM person_devices WHERE tenant_id = $1 AND person_id = $2 AND id = $3 AND app = $4`,
		tenant, person, id, AppPush)
	if err != nil {
		return fmt.Errorf("delete device: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return storage.ErrNotFound
	}
	return nil
}
