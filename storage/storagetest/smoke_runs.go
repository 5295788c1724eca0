package storagetest

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// NewSmokeRun stores a smoke run of tenant written by workflow and returns
// its id.
func NewSmokeRun(t testing.TB, db *storage.DB, tenant, workflow string) int64 {
	t.Helper()
	var id int64
	if err := db.GetContext(context.Background(), &id, `INSERT INTO smoke_runs (tenant_id, workflow_id) VALUES ($1, $2) RETURNING id`, tenant, workflow); err != nil {
		t.Fatal(err)
	}
	return id
}

// SmokeRunWorkflow returns the id of the workflow that wrote the tenant's
// smoke row id; another tenant's row is storage.ErrNotFound.
func SmokeRunWorkflow(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64) (string, error) {
	return storage.GetOne[string](ctx, q, "read smoke run", `SELECT workflow_id FROM smoke_runs WHERE id = $1 AND tenant_id = $2`, id, tenant)
}
