package workflows_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/workflows"
)

// A sweep takes batch after batch while they come back full, and no more
// than its bound.
func TestUploadOrphanSweepIsBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		full    int // batches that come back full before a partial one
		batches int
		want    activities.UploadSweep
	}{
		{"nothing expired", 0, 1, activities.UploadSweep{}},
		{"two full batches, then the rest", 2, 3, activities.UploadSweep{Uploads: 2*3 + 1, Objects: 2*6 + 2, Kept: 2}},
		{"stops at its bound", 10, 4, activities.UploadSweep{Uploads: 4 * 3, Objects: 4 * 6, Kept: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, a := activityEnv()
			batches := 0
			env.OnActivity(a.SweepUploadOrphans, mockAny, mockAny).Return(func(_ context.Context, batch int) (activities.UploadSweep, error) {
				batches++
				if batch != 4 {
					t.Errorf("batch of %d", batch)
				}
				if batches <= c.full {
					return activities.UploadSweep{Uploads: 3, Objects: 6, Kept: 1}, nil
				}
				if c.full == 0 {
					return activities.UploadSweep{}, nil
				}
				return activities.UploadSweep{Uploads: 1, Objects: 2}, nil
			})
			env.ExecuteWorkflow(workflows.UploadOrphanSweep, workflows.BatchBounds{Batch: 4, Batches: 4})
			var got activities.UploadSweep
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			if err := env.GetWorkflowResult(&got); err != nil || got != c.want || batches != c.batches {
				t.Fatalf("%+v after %d batches, want %+v after %d (%v)", got, batches, c.want, c.batches, err)
			}
		})
	}
}
