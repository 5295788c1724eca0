package storage_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

func TestExecOneWantsARow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	if _, err := db.ExecContext(ctx, `INSERT INTO smoke_runs (tenant_id, workflow_id) VALUES ($1, 'smoke-1')`, tenant); err != nil {
		t.Fatal(err)
	}
	const del = `DELETE FROM smoke_runs WHERE tenant_id = $1`
	if err := storage.ExecOne(ctx, db, "delete run", del, tenant); err != nil {
		t.Fatalf("first delete: %v", err)
	}
	if err := storage.ExecOne(ctx, db, "delete run", del, tenant); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	err := storage.ExecOne(ctx, db, "delete run", `DELETE FROM no_such_table WHERE tenant_id = $1`, tenant)
	if err == nil || errors.Is(err, storage.ErrNotFound) || !strings.HasPrefix(err.Error(), "delete run: ") {
		t.Fatalf("a failing statement: %v", err)
	}
}
