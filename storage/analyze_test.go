package storage_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

// TestAnalyzeLeavesTheTablesToARefreshUnderWay: a refresh of statistics
// that finds one of the same tables under way does not wait for it.
func TestAnalyzeLeavesTheTablesToARefreshUnderWay(t *testing.T) {
	t.Parallel()
	ctx, db := context.Background(), stacktest.DB(t)
	if ran, err := storage.Analyze(ctx, db, "people", "person_emails"); err != nil || !ran {
		t.Fatalf("analyze with none under way: %v %v", ran, err)
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `ANALYZE people, person_emails`); err != nil {
		t.Fatal(err)
	}
	var held bool
	if err := tx.GetContext(ctx, &held, `SELECT pg_try_advisory_xact_lock(hashtextextended('analyze people, person_emails', 0))`); err != nil || !held {
		t.Fatalf("taking the refresh's lock: %v %v", held, err)
	}
	if ran, err := storage.Analyze(ctx, db, "people", "person_emails"); err != nil || ran {
		t.Fatalf("analyze with one under way: ran %v, %v; want left to it", ran, err)
	}
}
