package workflows_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/workflows"
)

// A batch-progress sweep takes batch after batch while they come back
// full, and no more than its bound; with no bounds given it takes
// BatchProgressBatch rows a batch and at most BatchProgressBatches batches.
func TestBatchProgressSweepIsBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		in      workflows.BatchBounds
		full    int // batches that come back full before a partial one
		want    int64
		batches int
	}{
		{"nothing to sweep", workflows.BatchBounds{Batch: 4, Batches: 3}, 0, 0, 1},
		{"two full batches, then the rest", workflows.BatchBounds{Batch: 4, Batches: 3}, 2, 2*4 + 1, 3},
		{"stops at its bound", workflows.BatchBounds{Batch: 4, Batches: 2}, 10, 2 * 4, 2},
		{"default bounds", workflows.BatchBounds{}, 100, workflows.BatchProgressBatch * workflows.BatchProgressBatches, workflows.BatchProgressBatches},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBatch := c.in.Batch
			if wantBatch == 0 {
				wantBatch = workflows.BatchProgressBatch
			}
			env, a := activityEnv()
			batches := 0
			env.OnActivity(a.SweepBatchProgress, mockAny, mockAny).Return(func(_ context.Context, batch int) (int64, error) {
				batches++
				if batch != wantBatch {
					t.Errorf("batch of %d, want %d", batch, wantBatch)
				}
				switch {
				case batches <= c.full:
					return int64(batch), nil
				case c.full == 0:
					return 0, nil
				}
				return 1, nil
			})
			env.ExecuteWorkflow(workflows.BatchProgressSweep, c.in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var got int64
			if err := env.GetWorkflowResult(&got); err != nil || got != c.want || batches != c.batches {
				t.Fatalf("%d swept after %d batches, want %d after %d (%v)", got, batches, c.want, c.batches, err)
			}
		})
	}
}
