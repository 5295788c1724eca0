package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

// UrgentQueue is the task queue of the urgent lane beside queue: Emergency
// alerts and verification codes are started there, and their activities
// and children stay there, so they never wait for a worker slot that
// NonEmergency work holds (see worker.Start).
func UrgentQueue(queue string) string { return queue + "-urgent" }

// Activity options, one helper per kind of work. Each says how long one
// attempt may take, how attempts back off, and which error types retrying
// cannot fix (the activities return them as non-retryable application errors).

// Error types that end an activity at once.
var (
	// alertErrors: the alert is gone, its id is another alert's now, or its
	// stored settings are unreadable.
	alertErrors = []string{activities.ErrTypeAlertNotFound, activities.ErrTypeAlertIDReused, activities.ErrTypeBadAlert}
	// mediaErrors: the uploaded file is not media tocsin can encode.
	mediaErrors = []string{activities.ErrTypeInvalidMedia, activities.ErrTypeUnsupportedMedia, activities.ErrTypeAudioTooLong,
		activities.ErrTypeAudioOutOfBounds, activities.ErrTypeImageTooLarge}
	// hookErrors: the signing secret cannot be opened or the event not encoded.
	hookErrors = []string{activities.ErrTypeHookSecret, activities.ErrTypeHookPayload}
	// codeErrors: the address cannot take a code or its channel has no provider.
	codeErrors = []string{activities.ErrTypeUndeliverable, activities.ErrTypeNoProvider}
)

// backoff is an exponential retry policy from initial to at most max, over
// at most attempts attempts.
func backoff(initial, max time.Duration, attempts int32, nonRetryable []string) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval: initial, BackoffCoefficient: 2, MaximumInterval: max,
		MaximumAttempts: attempts, NonRetryableErrorTypes: nonRetryable,
	}
}

// withOptions sets the start-to-close timeout of one attempt and the retry policy.
func withOptions(ctx workflow.Context, attempt time.Duration, retry *temporal.RetryPolicy) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: attempt, RetryPolicy: retry})
}

// runLocally sets ctx's local activity options from its activity options
// (one attempt's timeout and the retry policy): the same kind of work, run
// as a local activity.
func runLocally(ctx workflow.Context) workflow.Context {
	o := workflow.GetActivityOptions(ctx)
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: o.StartToCloseTimeout, RetryPolicy: o.RetryPolicy})
}

// alertStepOptions are for an alert's bookkeeping (prepare, record, finish):
// short database work, retried quickly and often, since the API starts the
// workflow just before its transaction commits.
func alertStepOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, 10*time.Minute, backoff(200*time.Millisecond, 30*time.Second, 20, alertErrors))
}

// alertLocalStepOptions are alertStepOptions for the same steps run as
// local activities. Resolving a very large alert's recipients can take
// longer than a workflow task's timeout; the SDK heartbeats the task while
// a local activity runs, so one attempt may take as long as an activity's.
func alertLocalStepOptions(ctx workflow.Context) workflow.Context {
	return runLocally(alertStepOptions(ctx))
}

// deliveryOptions are for delivering a batch to providers: heartbeating, at
// most maxAttempts attempts (the alert's own setting).
func deliveryOptions(ctx workflow.Context, maxAttempts int) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    10 * time.Second,
		RetryPolicy:         backoff(time.Second, 30*time.Second, int32(maxAttempts), alertErrors),
	})
}

// localDeliveryOptions are deliveryOptions for a batch delivered as a local
// activity (a single-batch alert of SendAlert version 2); the SDK
// heartbeats the workflow task while it runs. Attempts whose backoff is
// shorter than the workflow task's timeout are retried inside the task, so
// since version 3 the batch gets one local attempt and its retries run as
// an activity (executeOnceLocally with deliveryOptions).
func localDeliveryOptions(ctx workflow.Context, maxAttempts int) workflow.Context {
	return runLocally(deliveryOptions(ctx, maxAttempts))
}

// capUpdateOptions are for sending an alert's CAP Update or Cancel.
func capUpdateOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, 2*time.Minute, backoff(time.Second, time.Minute, 10, alertErrors))
}

// mediaOptions are for inspecting and encoding an uploaded file:
// heartbeating, so a cancellation reaches the activity, and waited for when
// cancelled, so the workflow knows it has stopped writing.
func mediaOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: mediaAttempt,
		HeartbeatTimeout:    10 * time.Second,
		WaitForCancellation: true,
		RetryPolicy:         mediaRetry(),
	})
}

// mediaOptionsBeforeRemoval are the media options of histories written
// before RemoveFailedUploadChange: a cancellation does not wait for the
// activity, so the run ends with the cancellation as it did then.
func mediaOptionsBeforeRemoval(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, mediaAttempt, mediaRetry())
}

// mediaAttempt is how long one attempt at a file may take.
const mediaAttempt = 5 * time.Minute

// mediaRetry is the retry policy of media work: three attempts, none
// after an error that says the file is not media tocsin can encode.
func mediaRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: mediaErrors}
}

// cleanupOptions are for removing a failed upload's objects.
func cleanupOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, time.Minute, backoff(time.Second, time.Minute, 20, nil))
}

// hookAttemptOptions are for one hook POST (TOCSIN_HOOK_TIMEOUT, at most a
// few minutes) and its row; the workflow spaces the attempts of its own
// schedule, these only cover a worker or database failing mid-attempt.
func hookAttemptOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, 5*time.Minute, backoff(time.Second, time.Minute, 20, hookErrors))
}

// maintenanceOptions are for periodic database housekeeping (purges).
func maintenanceOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, 10*time.Minute, &temporal.RetryPolicy{MaximumAttempts: 5})
}

// bound returns n, or def when n is not positive: a maintenance
// workflow's input leaves a bound zero to take its default.
func bound(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// BatchBounds bounds one run of a maintenance workflow that works in
// batches (UploadOrphanSweep, NonceRetention, BatchProgressSweep): at most
// Batches activities, each handling at most Batch rows. A bound left zero takes the
// workflow's default; a larger backlog waits for the next runs.
type BatchBounds struct {
	Batch, Batches int
}

// or is b with each bound that is not positive taken from def.
func (b BatchBounds) or(def BatchBounds) BatchBounds {
	return BatchBounds{Batch: bound(b.Batch, def.Batch), Batches: bound(b.Batches, def.Batches)}
}

// inBatches runs act, a maintenance activity that takes a batch size and
// handles at most that many rows, with maintenanceOptions, once per batch
// of b.Batch up to b.Batches times, stopping after a batch that was not
// full: add adds a batch's result to the total and says whether the batch
// was full.
func inBatches[R any](ctx workflow.Context, act any, b BatchBounds, add func(total *R, r R) (full bool)) (R, error) {
	ctx = maintenanceOptions(ctx)
	var total R
	for range b.Batches {
		var r R
		if err := workflow.ExecuteActivity(ctx, act, b.Batch).Get(ctx, &r); err != nil {
			return total, err
		}
		if !add(&total, r) {
			break
		}
	}
	return total, nil
}

// codeOptions are for sending a verification code: since Verification
// version 2 its first attempt runs as a local activity and the other five
// as an activity (executeOnceLocally).
func codeOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, time.Minute, backoff(2*time.Second, time.Minute, 6, codeErrors))
}

// codeLocalOptions are codeOptions for sending the code as a local activity,
// retried inside the workflow task (Verification version 1).
func codeLocalOptions(ctx workflow.Context) workflow.Context {
	return runLocally(codeOptions(ctx))
}

// smokeOptions are for the smoke test's single row.
func smokeOptions(ctx workflow.Context) workflow.Context {
	return withOptions(ctx, 10*time.Second, &temporal.RetryPolicy{MaximumAttempts: 3})
}
