package storagetest_test

import (
	"errors"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestSmokeRunWorkflowIsTheTenants(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	id := storagetest.NewSmokeRun(t, db, tenant, "smoke-1")
	if wf, err := storagetest.SmokeRunWorkflow(ctx, db, tenant, id); err != nil || wf != "smoke-1" {
		t.Fatalf("workflow %q, %v", wf, err)
	}
	if _, err := storagetest.SmokeRunWorkflow(ctx, db, other, id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal("another tenant's smoke run has a workflow")
	}
}
