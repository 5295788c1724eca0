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
// upload request waits for. When the processing fails, or the workflow is
// cancelled (the request gave up waiting), it removes every object of the
// upload once the activity has stopped: the request records a file only
// from a workflow that completed, so nothing of an upload without a file
// is left in the object store.
func ProcessFile(ctx workflow.Context, in activities.ProcessFileInput) (activities.ProcessFileResult, error) {
	var a *activities.Activities
	var res activities.ProcessFileResult
	err := workflow.ExecuteActivity(mediaOptions(ctx), a.ProcessFile, in).Get(ctx, &res)
	if err == nil && ctx.Err() != nil {
		// Cancelled while the activity finished: the request is gone.
		err = ctx.Err()
	}
	if err != nil && in.Prefix != "" {
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		if rerr := workflow.ExecuteActivity(cleanupOptions(dctx), a.RemoveUpload, in.Prefix).Get(dctx, nil); rerr != nil {
			workflow.GetLogger(ctx).Warn("remove the objects of a failed upload", "prefix", in.Prefix, "err", rerr)
		}
	}
	return res, err
}
