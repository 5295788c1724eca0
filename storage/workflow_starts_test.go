package storage_test

import (
	"context"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

// The urgent starter loop claims only urgent requests and the other loop
// only the rest, most urgent and oldest first.
func TestClaimStartsSplitsUrgentFromTheRest(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	for _, r := range []struct {
		id       string
		priority int
	}{{"normal-1", storage.PriorityNormal}, {"files-1", storage.PriorityInteractive}, {"urgent-1", storage.PriorityUrgent}, {"urgent-2", storage.PriorityUrgent}} {
		if err := storage.EnqueueStart(ctx, db, storage.StartRequest{TenantID: "1", WorkflowID: r.id, Workflow: "W", Input: map[string]any{}, Priority: r.priority}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(urgent bool) []string { return claimStarts(ctx, t, db, urgent, 10) }
	if got := claim(true); len(got) != 2 || got[0] != "urgent-1" || got[1] != "urgent-2" {
		t.Fatalf("urgent claim %v", got)
	}
	if got := claim(false); len(got) != 2 || got[0] != "files-1" || got[1] != "normal-1" {
		t.Fatalf("other claim %v", got)
	}
}

// Within a priority the tenants take turns: a tenant whose requests fill
// the outbox does not hold another tenant's behind all of them.
func TestClaimStartsLetsTenantsTakeTurns(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	enqueue := func(tenant, id string, priority int) {
		t.Helper()
		if err := storage.EnqueueStart(ctx, db, storage.StartRequest{TenantID: tenant, WorkflowID: id, Workflow: "W", Input: map[string]any{}, Priority: priority}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"flood-1", "flood-2", "flood-3", "flood-4", "flood-5"} {
		enqueue("1", id, storage.PriorityUrgent)
	}
	enqueue("2", "other-1", storage.PriorityUrgent)
	enqueue("2", "other-2", storage.PriorityUrgent)
	enqueue("1", "normal-1", storage.PriorityNormal)
	enqueue("2", "normal-2", storage.PriorityNormal)
	enqueue("1", "files-1", storage.PriorityInteractive)
	claim := func(urgent bool, limit int) []string { return claimStarts(ctx, t, db, urgent, limit) }
	if got, want := claim(true, 4), []string{"flood-1", "other-1", "flood-2", "other-2"}; !slices.Equal(got, want) {
		t.Fatalf("urgent claim %v, want %v", got, want)
	}
	if got, want := claim(true, 10), []string{"flood-1", "other-1", "flood-2", "other-2", "flood-3", "flood-4", "flood-5"}; !slices.Equal(got, want) {
		t.Fatalf("urgent claim %v, want %v", got, want)
	}
	// Priority still comes first: file processing before NonEmergency alerts.
	if got, want := claim(false, 10), []string{"files-1", "normal-1", "normal-2"}; !slices.Equal(got, want) {
		t.Fatalf("other claim %v, want %v", got, want)
	}
}

// claimStarts claims up to limit start requests of a lane in a transaction
// of its own and returns their workflow ids in the order claimed.
func claimStarts(ctx context.Context, t *testing.T, db *storage.DB, urgent bool, limit int) []string {
	t.Helper()
	var ids []string
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		reqs, err := storage.ClaimStarts(ctx, tx, limit, urgent)
		for _, r := range reqs {
			ids = append(ids, r.WorkflowID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
