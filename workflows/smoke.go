// Package workflows holds tocsin's deterministic Temporal workflows. Their
// side effects run as activities (package activities), which workflows call
// through a nil *activities.Activities.
package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

// SmokeInput names the tenant the smoke run is recorded for.
type SmokeInput struct {
	Tenant string
}

// Smoke has the worker write one row to PostgreSQL and returns its id. It
// proves the path API → Temporal → worker → PostgreSQL end to end.
func Smoke(ctx workflow.Context, in SmokeInput) (int64, error) {
	ctx = smokeOptions(ctx)
	var a *activities.Activities
	var id int64
	err := workflow.ExecuteActivity(ctx, a.RecordSmoke, activities.SmokeRecord{
		Tenant:     in.Tenant,
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
	}).Get(ctx, &id)
	return id, err
}
