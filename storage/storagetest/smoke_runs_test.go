package storagetest_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestSmokeRunWorkflowIsTheTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	var id int64
	if err := db.GetContext(ctx, &id, `INSERT INTO smoke_runs (tenant_id, workflow_id) VALUES ($1, 'smoke-1') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	if wf, err := storagetest.SmokeRunWorkflow(ctx, db, tenant, id); err != nil || wf != "smoke-1" {
		t.Fatalf("workflow %q, %v", wf, err)
	}
	if _, err := storagetest.SmokeRunWorkflow(ctx, db, stacktest.NewTenant(), id); err == nil {
		t.Fatal("another tenant's smoke run has a workflow")
	}
}
