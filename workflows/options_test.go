package workflows

import (
	"fmt"
	"reflect"
	"testing"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// TestLocalOptionsAreTheActivityOptions: work that runs as a local
// activity in some histories and as an activity in others (an alert's
// database steps, a batch's delivery, a verification code) has one attempt
// timeout and one retry policy, whichever way it runs.
func TestLocalOptionsAreTheActivityOptions(t *testing.T) {
	kinds := map[string]struct {
		activity, local func(workflow.Context) workflow.Context
	}{
		"alert step": {alertStepOptions, alertLocalStepOptions},
		"delivery": {
			func(ctx workflow.Context) workflow.Context { return deliveryOptions(ctx, 4) },
			func(ctx workflow.Context) workflow.Context { return localDeliveryOptions(ctx, 4) },
		},
		"code": {codeOptions, codeLocalOptions},
	}
	for name, k := range kinds {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.ExecuteWorkflow(func(ctx workflow.Context) error {
			a, l := workflow.GetActivityOptions(k.activity(ctx)), workflow.GetLocalActivityOptions(k.local(ctx))
			if a.StartToCloseTimeout != l.StartToCloseTimeout || a.RetryPolicy == nil || l.RetryPolicy == nil || !reflect.DeepEqual(*a.RetryPolicy, *l.RetryPolicy) {
				return fmt.Errorf("activity: %s, %+v; local: %s, %+v", a.StartToCloseTimeout, a.RetryPolicy, l.StartToCloseTimeout, l.RetryPolicy)
			}
			return nil
		})
		if err := env.GetWorkflowError(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
