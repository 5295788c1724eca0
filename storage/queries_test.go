package storage_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestExecOneWantsARow(t *testing.T) {
	t.Parallel()
	ctx, db, tenant := withRuns(t, "smoke-1")
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
	ctx, db, tenant := withRuns(t, "smoke-b", "smoke-a")
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

func TestPageCountsAndReadsOnePage(t *testing.T) {
	t.Parallel()
	ctx, db, tenant := withRuns(t, "c", "a", "b")
	count := storage.CountRows(`FROM smoke_runs WHERE tenant_id = $1`)
	const list = `SELECT workflow_id FROM smoke_runs WHERE tenant_id = $1 ORDER BY workflow_id`
	args := make([]any, 1, 4)
	args[0] = tenant
	rows, total, err := storage.Page[string](ctx, db, "runs", count, list, args, 2, 1)
	if err != nil || total != storage.ExactTotal(3) || !slices.Equal(rows, []string{"b", "c"}) {
		t.Fatalf("page %v of %+v, %v", rows, total, err)
	}
	if spare := args[:cap(args)]; spare[1] != nil {
		t.Fatalf("the limit was written into the caller's arguments: %v", spare)
	}
	if q, a := storage.PageQuery(list, args, 2, 1); q != list+" LIMIT $2 OFFSET $3" || !slices.Equal(a, []any{tenant, 2, 1}) {
		t.Fatalf("page query %q %v", q, a)
	}
	// Past the last row the list statement does not run (this one would fail).
	rows, total, err = storage.Page[string](ctx, db, "runs", count, `SELECT no_such_column FROM smoke_runs WHERE tenant_id = $1`, args, 2, 3)
	if err != nil || total != storage.ExactTotal(3) || rows == nil || len(rows) != 0 {
		t.Fatalf("past the end: %v of %+v, %v", rows, total, err)
	}
	if _, _, err := storage.Page[string](ctx, db, "runs", storage.CountRows(`FROM no_such_table`), list, args, 2, 0); err == nil || !strings.HasPrefix(err.Error(), "count runs: ") {
		t.Fatalf("a failing count: %v", err)
	}
	if _, _, err := storage.Page[string](ctx, db, "runs", count, `SELECT no_such_column FROM smoke_runs WHERE tenant_id = $1`, args, 2, 0); err == nil || !strings.HasPrefix(err.Error(), "list runs: ") {
		t.Fatalf("a failing list: %v", err)
	}
	// A count kept elsewhere is taken as it is.
	kept := storage.CountExact(`SELECT 7 WHERE $1 <> ''`)
	if rows, total, err := storage.Page[string](ctx, db, "runs", kept, list, args, 2, 0); err != nil || total != storage.ExactTotal(7) || len(rows) != 2 {
		t.Fatalf("kept count: %v of %+v, %v", rows, total, err)
	}
}

// TestPageCountStopsEarly: a request matching more rows than
// storage.CountLimit counts no further than that, or than the row after
// the page asked for, and says that the total is only a lower bound; below
// the limit, and once the page reaches the last row, the total is exact.
func TestPageCountStopsEarly(t *testing.T) {
	t.Parallel()
	ctx, db, tenant := withRuns(t)
	const n = storage.CountLimit + 50
	if _, err := db.ExecContext(ctx, `INSERT INTO smoke_runs (tenant_id, workflow_id)
		SELECT $1, 'w' || lpad(i::text, 6, '0') FROM generate_series(1, $2::int) i`, tenant, n); err != nil {
		t.Fatal(err)
	}
	count := storage.CountRows(`FROM smoke_runs WHERE tenant_id = $1`)
	const list = `SELECT workflow_id FROM smoke_runs WHERE tenant_id = $1 ORDER BY workflow_id`
	page := func(limit, offset int) ([]string, storage.Total) {
		t.Helper()
		rows, total, err := storage.Page[string](ctx, db, "runs", count, list, []any{tenant}, limit, offset)
		if err != nil {
			t.Fatal(err)
		}
		return rows, total
	}
	if rows, total := page(25, 0); total != (storage.Total{N: storage.CountLimit}) || len(rows) != 25 || rows[0] != "w000001" {
		t.Fatalf("first page: %d rows, total %+v", len(rows), total)
	}
	// Further on, the count reaches one row past the page.
	if rows, total := page(25, storage.CountLimit); total != (storage.Total{N: storage.CountLimit + 26}) || len(rows) != 25 || rows[0] != "w010001" {
		t.Fatalf("page after the limit: %d rows, total %+v", len(rows), total)
	}
	// The page holding the last row knows the total exactly.
	if rows, total := page(25, n-10); total != storage.ExactTotal(n) || len(rows) != 10 {
		t.Fatalf("last page: %d rows, total %+v", len(rows), total)
	}
	if rows, total := page(25, n); total != storage.ExactTotal(n) || len(rows) != 0 {
		t.Fatalf("past the end: %d rows, total %+v", len(rows), total)
	}
	// The statement says how far it counts.
	q, a := storage.CountQuery(count, []any{tenant}, 25, 0)
	if q != `SELECT count(*) FROM (SELECT 1 FROM smoke_runs WHERE tenant_id = $1 LIMIT $2) counted` || !slices.Equal(a, []any{tenant, int64(storage.CountLimit)}) {
		t.Fatalf("count query %q %v", q, a)
	}
}

// TestPageReadsOneSnapshot: a row written between the count and the list
// is in neither, so the total and the page agree.
func TestPageReadsOneSnapshot(t *testing.T) {
	t.Parallel()
	ctx, db, tenant := withRuns(t, "a", "b")
	// The count waits, and a run is added while it does.
	count := storage.CountRows(`FROM (SELECT pg_sleep(0.5)) wait, smoke_runs WHERE tenant_id = $1`)
	const list = `SELECT workflow_id FROM smoke_runs WHERE tenant_id = $1 ORDER BY workflow_id`
	var rows []string
	var total storage.Total
	var err error
	paged := make(chan struct{})
	go func() {
		defer close(paged)
		rows, total, err = storage.Page[string](ctx, db, "runs", count, list, []any{tenant}, 10, 0)
	}()
	storagetest.WaitRunning(t, db, "pg_sleep(0.5)")
	storagetest.NewSmokeRun(t, db, tenant, "c")
	<-paged
	if err != nil || total != storage.ExactTotal(2) || !slices.Equal(rows, []string{"a", "b"}) {
		t.Fatalf("page %v of %+v, %v: the count and the list saw different rows", rows, total, err)
	}
}

func TestGetOneReadsOneRow(t *testing.T) {
	t.Parallel()
	ctx, db, tenant := withRuns(t, "smoke-1")
	const q = `SELECT workflow_id FROM smoke_runs WHERE tenant_id = $1`
	if got, err := storage.GetOne[string](ctx, db, "read run", q, tenant); err != nil || got != "smoke-1" {
		t.Fatalf("row %q, %v", got, err)
	}
	if _, err := storage.GetOne[string](ctx, db, "read run", q, stacktest.NewTenant()); err != storage.ErrNotFound {
		t.Fatalf("another tenant's row: %v, want ErrNotFound", err)
	}
	_, err := storage.GetOne[string](ctx, db, "read run", `SELECT workflow_id FROM no_such_table WHERE tenant_id = $1`, tenant)
	if err == nil || errors.Is(err, storage.ErrNotFound) || !strings.HasPrefix(err.Error(), "read run: ") {
		t.Fatalf("a failing query: %v", err)
	}
}

// withRuns returns a test database and a new tenant that has a smoke run
// of each of workflows.
func withRuns(t *testing.T, workflows ...string) (context.Context, *storage.DB, string) {
	t.Helper()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	for _, w := range workflows {
		storagetest.NewSmokeRun(t, db, tenant, w)
	}
	return ctx, db, tenant
}
