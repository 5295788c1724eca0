package storage_test

import (
	"context"
	"errors"
	"slices"
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

func TestSelectAllReadsEveryRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	for _, w := range []string{"smoke-b", "smoke-a"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO smoke_runs (tenant_id, workflow_id) VALUES ($1, $2)`, tenant, w); err != nil {
			t.Fatal(err)
		}
	}
	const q = `SELECT workflow_id FROM smoke_runs WHERE tenant_id = $1 ORDER BY workflow_id`
	got, err := storage.SelectAll[string](ctx, db, "read runs", q, tenant)
	if err != nil || !slices.Equal(got, []string{"smoke-a", "smoke-b"}) {
		t.Fatalf("rows %v, %v", got, err)
	}
	if got, err := storage.SelectAll[string](ctx, db, "read runs", q, stacktest.NewTenant()); err != nil || len(got) != 0 {
		t.Fatalf("another tenant's rows %v, %v", got, err)
	}
	if _, err := storage.SelectAll[string](ctx, db, "read runs", `SELECT workflow_id FROM no_such_table WHERE tenant_id = $1`, tenant); err == nil || !strings.HasPrefix(err.Error(), "read runs: ") {
		t.Fatalf("a failing query: %v", err)
	}
}
