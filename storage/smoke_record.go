package storage

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// RecordSmokeRun writes the smoke workflow's row once per workflow (a retry
// returns the same row) and returns its id.
func RecordSmokeRun(ctx context.Context, q sqlx.QueryerContext, tenant, workflowID string) (int64, error) {
	var id int64
	if err := sqlx.GetContext(ctx, q, &id, `
		INSERT INTO smoke_runs (tenant_id, workflow_id, note) VALUES ($1, $2, 'written by the worker')
		ON CONFLICT (workflow_id) DO UPDATE SET note = excluded.note
		RETURNING id`, tenant, workflowID); err != nil {
		return 0, fmt.Errorf("record smoke run: %w", err)
	}
	return id, nil
}
