package storagetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// SmokeRunWorkflow returns the id of the workflow that wrote the tenant's
// smoke row id; another tenant's row is not found.
func SmokeRunWorkflow(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64) (string, error) {
	var wf string
	if err := sqlx.GetContext(ctx, q, &wf, `SELECT workflow_id FROM smoke_runs WHERE id = $1 AND tenant_id = $2`, id, tenant); err != nil {
		return "", fmt.Errorf("read smoke run: %w", err)
	}
	return wf, nil
}
