package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

// CapUpdateWorkflowID is the business id of the seq-th CAP update of the
// alert whose stored workflow id is alertWorkflowID.
func CapUpdateWorkflowID(alertWorkflowID string, seq int) string {
	return fmt.Sprintf("%s-cap-%d", alertWorkflowID, seq)
}

// SendCapUpdate sends an Update or Cancel of an alert's CAP messages;
// nothing when the alert's id is another alert's now.
func SendCapUpdate(ctx workflow.Context, in activities.CapUpdateInput) (activities.CapUpdateOutcome, error) {
	actx := capUpdateOptions(ctx)
	var a *activities.Activities
	var out activities.CapUpdateOutcome
	err := workflow.ExecuteActivity(actx, a.DeliverCapUpdate, in).Get(ctx, &out)
	endsForAnotherAlert(ctx, in.AlertRef, err)
	return out, err
}
