package workflows_test

import (
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/workflows"
)

func TestSmokeRecordsTheRunUnderItsWorkflowID(t *testing.T) {
	t.Parallel()
	env, a := activityEnv()
	env.OnActivity(a.RecordSmoke, mock.Anything, mock.MatchedBy(func(r activities.SmokeRecord) bool {
		return r.Tenant == "1001" && r.WorkflowID != ""
	})).Return(int64(7), nil)
	env.ExecuteWorkflow(workflows.Smoke, workflows.SmokeInput{Tenant: "1001"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := env.GetWorkflowResult(&id); err != nil || id != 7 {
		t.Fatalf("result %d, %v", id, err)
	}
	env.AssertExpectations(t)
}
