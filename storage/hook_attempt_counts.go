package storage

import (
	"context"
	"fmt"
)

// Count returns how many delivery attempts the tenant's subscription has
// stored, whatever their age (the history shows only the last 30 days), so
// tests can check what Purge left.
func (s *HookAttempts) Count(ctx context.Context, tenant string, subscription int64) (int, error) {
	var n int
	if err := s.DB.GetContext(ctx, &n, `SELECT count(*) FROM hook_attempts WHERE tenant_id = $1 AND subscription_id = $2`, tenant, subscription); err != nil {
		return 0, fmt.Errorf("count hook attempts: %w", err)
	}
	return n, nil
}
