package dispatch

import (
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/tocsin/tocsin/storage"
)

func TestOptionsCarryLanePriorityTenantFairnessAndReusePolicy(t *testing.T) {
	start := Options(storage.WorkflowStart{TenantID: "1001", WorkflowID: "alert-1001-7", Priority: storage.PriorityUrgent}, "q")
	if start.ID != "alert-1001-7" || start.TaskQueue != "q-urgent" || start.Priority.PriorityKey != 1 || start.Priority.FairnessKey != "1001" {
		t.Fatalf("start options %+v", start)
	}
	// Everything less urgent stays on the task queue itself.
	for _, p := range []int{storage.PriorityInteractive, storage.PriorityNormal} {
		if o := Options(storage.WorkflowStart{TenantID: "1001", WorkflowID: "x", Priority: p}, "q"); o.TaskQueue != "q" || o.Priority.PriorityKey != p {
			t.Fatalf("priority %d: task queue %s, key %d", p, o.TaskQueue, o.Priority.PriorityKey)
		}
	}
	if start.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("a started workflow may be started again: %v", start.WorkflowIDReusePolicy)
	}
	// A signal-with-start must reach a new run once the previous one ended.
	sws := Options(storage.WorkflowStart{TenantID: "1001", WorkflowID: "verify-x", SignalName: "resend", Priority: storage.PriorityUrgent}, "q")
	if sws.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED {
		t.Fatalf("signal-with-start policy %v", sws.WorkflowIDReusePolicy)
	}
}

func TestBackoffDoublesUpToAMinute(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute}
	for attempts, w := range want {
		if got := backoff(attempts); got != w {
			t.Errorf("backoff(%d) = %s, want %s", attempts, got, w)
		}
	}
	if got := backoff(1000); got != time.Minute {
		t.Errorf("backoff(1000) = %s", got)
	}
}

func TestOnlyARunFromBeforeTheRequestHoldsItsIDForAnother(t *testing.T) {
	requested := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		started time.Time
		another bool
	}{
		{requested.Add(-24 * time.Hour), true},          // an alert from before a restore
		{requested.Add(-clockSkew - time.Second), true}, // past what the clocks may differ
		{requested.Add(2 * time.Second), false},         // the run a start repeated after a crash made
		{requested.Add(-5 * time.Second), false},        // the same, with Temporal's clock behind PostgreSQL's
	} {
		if got := takenEarlier(c.started, requested); got != c.another {
			t.Errorf("run started %s before the request: taken by another %v, want %v", requested.Sub(c.started), got, c.another)
		}
	}
}
