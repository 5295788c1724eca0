package channelstate

import (
	"context"
	"fmt"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Devices is the push channel's view of people's device tokens (person_devices).
type Devices struct {
	DB *storage.DB
}

// Remove forgets the tenant's tokens of app, which the push service no
// longer accepts.
func (s *Devices) Remove(ctx context.Context, tenant, app string, tokens []string) error {
	if _, err := s.DB.ExecContext(ctx, `DELETE FROM person_devices WHERE tenant_id = $1 AND app = $2 AND token = ANY($3)`,
		tenant, app, pq.Array(tokens)); err != nil {
		return fmt.Errorf("remove device tokens: %w", err)
	}
	return nil
}
