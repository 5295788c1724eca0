package channelstate

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Devices is the push channel's view of people's device tokens (person_devices).
type Devices struct {
	DB *storage.DB
}

// Remove forgets the tenant's tokens of app, which the push service no
// longer accepts. It first takes their people's row locks (KEY SHARE, in
// id order), as every other writer of a person's devices does: removing
// the person, or changing its apps, deletes its devices in an order of its
// own, and deleting them in the tokens' order meanwhile would deadlock.
func (s *Devices) Remove(ctx context.Context, tenant, app string, tokens []string) error {
	return s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var people pq.Int64Array
		if err := tx.SelectContext(ctx, &people, `SELECT id FROM people WHERE tenant_id = $1 AND id IN (
				SELECT person_id FROM person_devices WHERE tenant_id = $1 AND app = $2 AND token = ANY($3))
			ORDER BY id FOR KEY SHARE`, tenant, app, pq.Array(tokens)); err != nil {
			return fmt.Errorf("lock the tokens' people: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM person_devices WHERE tenant_id = $1 AND app = $2 AND token = ANY($3) AND person_id = ANY($4)`,
			tenant, app, pq.Array(tokens), people); err != nil {
			return fmt.Errorf("remove device tokens: %w", err)
		}
		return nil
	})
}
