package directory

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// AppPush is the person_devices app of devices the push channel reaches.
const AppPush = "push"

// AddPushDevice registers a push device token to the user. A token already
// registered for push in the tenant (to this user or another) is
// ErrConflict; a device past storage.MaxDevicesPerPerson a
// *storage.LimitError.
func AddPushDevice(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, platform, token string) (storage.Device, error) {
	return devices.add(ctx, tx, deviceLimit, "device", tenant, person, `
		INSERT INTO person_devices (tenant_id, person_id, app, platform, token) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant_id, app, token) DO NOTHING`, AppPush, platform, token)
}

// GetDevice reads one device of the user, whatever its app.
func GetDevice(ctx context.Context, q Querier, tenant string, person, id int64) (storage.Device, error) {
	return devices.get(ctx, q, tenant, person, id)
}

// RemovePushDevice removes one push device of the user; ErrNotFound when
// the user has no push device with that id.
func RemovePushDevice(ctx context.Context, q Querier, tenant string, person, id int64) error {
	return storage.ExecOne(ctx, q, "delete device", `DELETE FROM person_devices WHERE tenant_id = $1 AND person_id = $2 AND id = $3 AND app = $4`,
		tenant, person, id, AppPush)
}
