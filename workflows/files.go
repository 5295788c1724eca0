package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

// ProcessFileID is the business id of the processing of an upload.
func ProcessFileID(tenant, upload string) string { return fmt.Sprintf("file-%s-%s", tenant, upload) }

// ProcessFile checks an uploaded file and encodes the versions asked for
// (a scaled-down image, voice and EAS audio) in one activity, which the
// upload request waits for.
func ProcessFile(ctx workflow.Context, in activities.ProcessFileInput) (activities.ProcessFileResult, error) {
	ctx = mediaOptions(ctx)
	var a *activities.Activities
	var res activities.ProcessFileResult
	err := workflow.ExecuteActivity(ctx, a.ProcessFile, in).Get(ctx, &res)
	return res, err
}
