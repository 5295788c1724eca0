package dispatch

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/tocsin/tocsin/storage"
)

// A hook delivery is started once under its business id, with the default
// priority and its tenant as the fairness key, as alerts are.
func TestHookOptionsCarryTenantFairness(t *testing.T) {
	o := HookOptions(7, storage.Event{ID: "evt_1", Tenant: "1001"}, "q")
	if o.ID != "hook-7-evt_1" || o.TaskQueue != "q" || o.Priority.PriorityKey != 0 || o.Priority.FairnessKey != "1001" ||
		o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Fatalf("hook delivery options %+v", o)
	}
}
