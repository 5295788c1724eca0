package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// SmokeRunCreatedAt returns when the smoke workflow wrote the tenant's row id.
func SmokeRunCreatedAt(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64) (time.Time, error) {
	var created time.Time
	if err := sqlx.GetContext(ctx, q, &created, `SELECT created_at FROM smoke_runs WHERE id = $1 AND tenant_id = $2`, id, tenant); err != nil {
		return created, fmt.Errorf("read smoke run: %w", err)
	}
	return created, nil
}
