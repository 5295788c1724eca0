package workflows

import (
	"errors"
	"slices"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// executeOnceLocally runs an activity's first attempt as a local activity,
// inside the workflow task, for work a person or an alert waits for. When
// that attempt fails with an error a retry may fix, the other attempts run
// as an activity, the retry policy's first interval later: the SDK retries
// a local activity inside the workflow task while its backoff is shorter
// than the task's timeout, so a failing provider would hold the task for
// minutes and its retries would not show in the history.
//
// ctx carries the activity's options (workflow.WithActivityOptions): their
// retry policy, which must bound the attempts, counts the local attempt
// too, and one attempt's timeout holds for it as well. first is the input
// of the local attempt, rest that of the activity's.
func executeOnceLocally(ctx workflow.Context, fn, first, rest any) workflow.Future {
	opts := workflow.GetActivityOptions(ctx)
	policy := *opts.RetryPolicy
	f, set := workflow.NewFuture(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		local := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: opts.StartToCloseTimeout,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		}), fn, first)
		err := local.Get(ctx, nil)
		if err == nil || policy.MaximumAttempts <= 1 || !retryable(err, policy.NonRetryableErrorTypes) {
			set.Chain(local)
			return
		}
		if err := workflow.Sleep(ctx, policy.InitialInterval); err != nil {
			set.SetError(err)
			return
		}
		policy.MaximumAttempts--
		set.Chain(workflow.ExecuteActivity(workflow.WithRetryPolicy(ctx, policy), fn, rest))
	})
	return f
}

// retryable tells whether another attempt may fix the error of an
// activity: not when it was cancelled or its error is non-retryable or of
// one of the types nonRetryable names.
func retryable(err error, nonRetryable []string) bool {
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return false
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return !app.NonRetryable() && !slices.Contains(nonRetryable, app.Type())
	}
	return true
}
