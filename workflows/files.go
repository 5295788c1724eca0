package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

// ProcessFileID is the business id of the processing of an upload.
func ProcessFileID(tenant, upload string) string { return fmt.Sprintf("file-%s-%s", tenant, upload) }

// RemoveFailedUploadChange names the ProcessFile shape (workflow.GetVersion)
// that heartbeats and waits for a cancelled activity to stop, then removes
// the objects of an upload whose processing failed or was cancelled.
// Histories written before it run the activity alone and end with it.
const RemoveFailedUploadChange = "remove-failed-upload"

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
	if workflow.GetVersion(ctx, RemoveFailedUploadChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		err := workflow.ExecuteActivity(mediaOptionsBeforeRemoval(ctx), a.ProcessFile, in).Get(ctx, &res)
		return res, err
	}
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

// The default BatchBounds of an upload orphan sweep: 100 claims an
// activity, at most 1,000 a run.
const (
	UploadOrphanBatch   = 100
	UploadOrphanBatches = 10
)

// UploadOrphanSweep removes the objects of uploads whose process died
// before recording their file (activities.SweepUploadOrphans), batch after
// batch while batches come back full. A Temporal schedule runs it every 15
// minutes; only claims past their upload's maximum life are taken, so an
// upload in progress is never touched.
func UploadOrphanSweep(ctx workflow.Context, in BatchBounds) (activities.UploadSweep, error) {
	b := in.or(BatchBounds{Batch: UploadOrphanBatch, Batches: UploadOrphanBatches})
	var a *activities.Activities
	return inBatches(ctx, a.SweepUploadOrphans, b, func(total *activities.UploadSweep, r activities.UploadSweep) bool {
		total.Uploads, total.Objects, total.Kept = total.Uploads+r.Uploads, total.Objects+r.Objects, total.Kept+r.Kept
		return r.Uploads+r.Kept >= b.Batch
	})
}
