package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/hooks"
)

// HookDeliveryInput is one event for one subscription.
type HookDeliveryInput struct {
	Tenant         string
	SubscriptionID int64
	Event          activities.HookEvent
	// Retries is the wait before each retry, before jitter
	// (TOCSIN_HOOK_RETRY_SCHEDULE when the delivery started); empty means
	// a single attempt.
	Retries []time.Duration
	// Test delivers even to an inactive subscription.
	Test bool
}

// HookDeliveryResult is how a delivery ended.
type HookDeliveryResult struct {
	// Outcome is the last attempt's outcome (hooks.Outcome) or Skipped.
	Outcome  string
	Attempts int
	// LastAttemptID is the history row of the last attempt, 0 when skipped.
	LastAttemptID int64
}

// HookDeliveryID is the business id of the delivery of event to subscription.
func HookDeliveryID(subscription int64, event string) string {
	return fmt.Sprintf("hook-%d-%s", subscription, event)
}

// HookDelivery POSTs an event to a subscription until it is delivered, the
// target answers 410, the subscription is deleted or deactivated, or the
// retry schedule is used up. Each attempt is one activity; the waits between
// them are durable timers, with ±20 % jitter and the receiver's Retry-After
// on 429 and 503.
func HookDelivery(ctx workflow.Context, in HookDeliveryInput) (HookDeliveryResult, error) {
	ctx = hookAttemptOptions(ctx)
	var a *activities.Activities
	key := workflow.GetInfo(ctx).WorkflowExecution.ID
	var res HookDeliveryResult
	for attempt := 1; ; attempt++ {
		wait, more := hooks.Backoff(in.Retries, key, attempt)
		var r activities.HookAttemptResult
		err := workflow.ExecuteActivity(ctx, a.AttemptHook, activities.HookAttempt{
			Tenant: in.Tenant, SubscriptionID: in.SubscriptionID, Event: in.Event,
			Attempt: attempt, RetryIn: wait, Final: !more, Test: in.Test,
		}).Get(ctx, &r)
		if err != nil {
			return res, err
		}
		res.Outcome, res.LastAttemptID = r.Outcome, r.AttemptID
		if r.Outcome != activities.Skipped {
			res.Attempts = attempt
		}
		retry := r.Outcome == string(hooks.Failed) || r.Outcome == string(hooks.Refused)
		if !retry || !more {
			return res, nil
		}
		if err := workflow.Sleep(ctx, r.NextIn); err != nil {
			return res, err
		}
	}
}

// HookHistoryRetentionInput says how much history to keep.
type HookHistoryRetentionInput struct {
	Days int
}

// HookHistoryDays is how long delivery attempts are kept.
const HookHistoryDays = 30

// HookHistoryRetention deletes delivery attempts older than the retention
// period. A Temporal schedule runs it every hour.
func HookHistoryRetention(ctx workflow.Context, in HookHistoryRetentionInput) (int64, error) {
	ctx = maintenanceOptions(ctx)
	var a *activities.Activities
	var n int64
	err := workflow.ExecuteActivity(ctx, a.PurgeHookHistory, bound(in.Days, HookHistoryDays)).Get(ctx, &n)
	return n, err
}
