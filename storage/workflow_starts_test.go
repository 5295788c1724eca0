package storage_test

import (
	"context"
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
	claim := func(urgent bool) []string {
		var ids []string
		err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			reqs, err := storage.ClaimStarts(ctx, tx, 10, urgent)
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
	if got := claim(true); len(got) != 2 || got[0] != "urgent-1" || got[1] != "urgent-2" {
		t.Fatalf("urgent claim %v", got)
	}
	if got := claim(false); len(got) != 2 || got[0] != "files-1" || got[1] != "normal-1" {
		t.Fatalf("other claim %v", got)
	}
}
