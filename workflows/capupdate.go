package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

// CapUpdateWorkflowID is the business id of an alert's seq-th CAP update.
func CapUpdateWorkflowID(tenant string, alertID int64, seq int) string {
	return fmt.Sprintf("%s-cap-%d", AlertWorkflowID(tenant, alertID), seq)
}

// SendCapUpdate sends an Update or Cancel of an alert's CAP messages.
func SendCapUpdate(ctx workflow.Context, in activities.CapUpdateInput) (activities.CapUpdateOutcome, error) {
	actx := capUpdateOptions(ctx)
	var a *activities.Activities
	var out activities.CapUpdateOutcome
	err := workflow.ExecuteActivity(actx, a.DeliverCapUpdate, in).Get(ctx, &out)
	return out, err
}
