package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
)

// Limits that keep every workflow history small: a DeliverChunk child runs
// at most ChunkActivities delivery activities (about 3,000 history events),
// and a SendAlert run starts at most ChildrenPerRun children before it
// continues as new. A channel group whose cycle needs at most
// InlineActivities delivery activities runs them in SendAlert itself, with
// no child. They are variables only so tests can make them small.
var (
	ChunkActivities  = 500
	ChildrenPerRun   = 200
	InlineActivities = 16
)

// FewRoundTripsChange names the versions of SendAlert's shape
// (workflow.GetVersion): 1 runs the database-only steps as local activities
// and delivers small alerts without a DeliverChunk child; 2 also delivers an
// alert of one batch per channel as local activities, so the whole alert is
// one workflow task; 3 gives such a local batch one attempt only, and runs
// its retries as an activity, so a failing provider or file store never
// holds a workflow task through the retries' backoff. Histories written
// before replay their own version.
const FewRoundTripsChange = "few-round-trips"

// FailedReason is what an alert whose workflow failed records and its
// alert.failed event says; the error itself goes to the worker's log.
const FailedReason = "delivery stopped on an internal error; the worker's log has the details"

// SendAlertInput starts the SendAlert workflow of an alert.
type SendAlertInput struct {
	Tenant  string
	AlertID int64
	// Tag is the alert's tag (alert.NewTag), part of its workflow id and
	// delivery keys; "" for alerts stored before tags came.
	Tag string
	// SendAt is when a scheduled alert is sent; zero means now.
	SendAt time.Time
	// State is set when the workflow continues as new.
	State *SendAlertState
}

// SendAlertState is where a SendAlert run stopped when it continued as new.
type SendAlertState struct {
	Plan         activities.AlertPlan
	Cycle        int
	Group        int
	NextBatch    int64
	CycleStarted bool
}

// SendAlert delivers an alert: it waits for the send time of a scheduled
// alert (a durable timer), resolves the recipients set-wise, then for each
// cycle delivers every channel in batches of recipients (seq in (lo, hi])
// with DeliverBatch activities, at most Parallelism at once. A cycle of a
// small alert (at most InlineActivities batches per channel group) runs
// them here; a bigger one runs them through DeliverChunk children, each
// with a bounded number of activities. After the first cycle the alert
// becomes Sent or Failed; cycles after the first resend to recipients who
// have not confirmed. It ends when the broadcast duration has passed.
//
// The steps that only touch PostgreSQL (PrepareAlert, StartCycle,
// FinishFirstCycle, CompleteAlert, FailAlert) are local activities: they run
// in the worker inside the workflow task, so a single-batch alert costs two
// workflow tasks and one DeliverBatch activity. They are idempotent, so a
// workflow task that is retried after a worker died may run them again.
func SendAlert(ctx workflow.Context, in SendAlertInput) error {
	ref := activities.AlertRef{Tenant: in.Tenant, AlertID: in.AlertID, Tag: in.Tag}
	shape := workflow.GetVersion(ctx, FewRoundTripsChange, workflow.DefaultVersion, 3)
	fast, oneTask, localOnce := shape >= 1, shape >= 2, shape >= 3
	actx := alertStepOptions(ctx)
	lctx := alertLocalStepOptions(ctx)
	// db runs a database-only step: a local activity, or in histories of
	// the earlier shape an activity.
	db := func(fn any, arg any) workflow.Future {
		if fast {
			return workflow.ExecuteLocalActivity(lctx, fn, arg)
		}
		return workflow.ExecuteActivity(actx, fn, arg)
	}
	var a *activities.Activities
	fail := func(err error) error {
		if endsForAnotherAlert(ctx, ref, err) {
			// FailAlert would find the other alert too, and leave it.
			return err
		}
		workflow.GetLogger(ctx).Error("alert failed", "tenant", in.Tenant, "alert", in.AlertID, "error", err)
		_ = db(a.FailAlert, activities.FailAlertInput{AlertRef: ref, Reason: FailedReason}).Get(ctx, nil)
		return err
	}
	complete := func() error {
		err := db(a.CompleteAlert, ref).Get(ctx, nil)
		endsForAnotherAlert(ctx, ref, err)
		return err
	}

	st := in.State
	if st == nil {
		if !in.SendAt.IsZero() {
			if d := in.SendAt.Sub(workflow.Now(ctx)); d > 0 {
				if err := workflow.Sleep(ctx, d); err != nil {
					return err
				}
			}
		}
		var plan activities.AlertPlan
		if err := db(a.PrepareAlert, ref).Get(ctx, &plan); err != nil {
			return fail(err)
		}
		if plan.Cancelled {
			return nil
		}
		if plan.Failed {
			return complete()
		}
		st = &SendAlertState{Plan: plan, Cycle: 1}
	}
	plan := st.Plan
	groups := channelGroups(plan)
	batches := (plan.Recipients + int64(plan.BatchSize) - 1) / int64(plan.BatchSize)
	if batches == 0 {
		// No recipients, and not failed: a broadcast or ETN to areas
		// delivers in the first batch, which reads no recipients. (Before,
		// an alert without recipients always failed in PrepareAlert, so no
		// recorded history reaches this with 0 batches.)
		batches = 1
	}
	children := 0
	for st.Cycle <= plan.Cycles {
		if !st.CycleStarted {
			if st.Cycle > 1 {
				if err := workflow.Sleep(ctx, plan.CycleEvery); err != nil {
					return err
				}
				if !plan.BroadcastEnd.IsZero() && workflow.Now(ctx).After(plan.BroadcastEnd) {
					break
				}
			}
			if err := db(a.StartCycle, activities.CycleInput{AlertRef: ref, Cycle: st.Cycle}).Get(ctx, nil); err != nil {
				return fail(err)
			}
			st.CycleStarted = true
		}
		for st.Group < len(groups) {
			group := groups[st.Group]
			var earlier []string
			for _, g := range groups[:st.Group] {
				earlier = append(earlier, g...)
			}
			if !plan.Sequential {
				earlier = nil
			}
			per := int64(ChunkActivities / len(group))
			if per < 1 {
				per = 1
			}
			for st.NextBatch < batches {
				if children >= ChildrenPerRun {
					next := in
					next.State = st
					return workflow.NewContinueAsNewError(ctx, SendAlert, next)
				}
				if fast && (batches-st.NextBatch)*int64(len(group)) <= int64(InlineActivities) {
					// Few batches: deliver them here, without a child; a
					// single batch per channel in this workflow task.
					chunk := ChunkInput{
						AlertRef: ref, Cycle: st.Cycle, Channels: group, Earlier: earlier,
						FromBatch: st.NextBatch, ToBatch: batches, BatchSize: plan.BatchSize, Recipients: plan.Recipients,
						Parallelism: plan.Parallelism, MaxAttempts: plan.MaxAttempts,
					}
					mode := asActivities
					if oneTask && batches-st.NextBatch == 1 {
						mode = asLocalActivities
						if localOnce {
							mode = onceLocally
						}
					}
					if _, err := deliverBatches(ctx, chunk, mode); err != nil {
						return fail(err)
					}
					children++
					st.NextBatch = batches
					break
				}
				to := min(batches, st.NextBatch+per)
				cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
					// The alert's workflow id (made of the input as the API
					// made it; the same as before tags for earlier alerts).
					WorkflowID: fmt.Sprintf("%s-c%d-g%d-b%d", alert.WorkflowID(in.Tenant, in.AlertID, in.Tag), st.Cycle, st.Group, st.NextBatch),
				})
				chunk := ChunkInput{
					AlertRef: ref, Cycle: st.Cycle, Channels: group, Earlier: earlier,
					FromBatch: st.NextBatch, ToBatch: to, BatchSize: plan.BatchSize, Recipients: plan.Recipients,
					Parallelism: plan.Parallelism, MaxAttempts: plan.MaxAttempts,
				}
				if err := workflow.ExecuteChildWorkflow(cctx, DeliverChunk, chunk).Get(ctx, nil); err != nil {
					return fail(err)
				}
				children++
				st.NextBatch = to
			}
			st.Group++
			st.NextBatch = 0
		}
		if err := redialCalls(ctx, actx, plan, ref); err != nil {
			return fail(err)
		}
		if st.Cycle == 1 {
			if err := db(a.FinishFirstCycle, ref).Get(ctx, nil); err != nil {
				return fail(err)
			}
		}
		st.Cycle++
		st.Group = 0
		st.CycleStarted = false
	}
	if !plan.BroadcastEnd.IsZero() {
		if d := plan.BroadcastEnd.Sub(workflow.Now(ctx)); d > 0 {
			if err := workflow.Sleep(ctx, d); err != nil {
				return err
			}
		}
	}
	return complete()
}

// endsForAnotherAlert reports whether err says that ref's alert id is
// another alert's now (activities.ErrTypeAlertIDReused: the database was
// restored from a backup taken before ref's alert was stored), and logs
// that once, at ERROR with the workflow's id: the workflow ends and leaves
// the other alert alone.
func endsForAnotherAlert(ctx workflow.Context, ref activities.AlertRef, err error) bool {
	if err == nil || !activities.IsAlertIDReused(err) {
		return false
	}
	workflow.GetLogger(ctx).Error("the alert's id is another alert's now (a database restore): this workflow ends without touching it",
		"workflowId", workflow.GetInfo(ctx).WorkflowExecution.ID, "tenant", ref.Tenant, "alert", ref.AlertID, "error", err)
	return true
}

// channelGroups are the channels delivered together: all of them at once,
// or one after another in Sequential order.
func channelGroups(p activities.AlertPlan) [][]string {
	if !p.Sequential {
		return [][]string{p.Channels}
	}
	out := make([][]string, len(p.Channels))
	for i, c := range p.Channels {
		out[i] = []string{c}
	}
	return out
}

// ChunkInput is a range of delivery batches of one cycle, on some channels.
type ChunkInput struct {
	activities.AlertRef
	Cycle              int
	Channels           []string
	Earlier            []string
	FromBatch, ToBatch int64
	BatchSize          int
	Recipients         int64
	Parallelism        int
	MaxAttempts        int
}

// ChunkOutcome counts what a chunk delivered.
type ChunkOutcome struct {
	Sent, Failed, Skipped int
}

// DeliverChunk runs the DeliverBatch activities of batches [FromBatch,
// ToBatch) on each channel, at most Parallelism at once.
func DeliverChunk(ctx workflow.Context, in ChunkInput) (ChunkOutcome, error) {
	return deliverBatches(ctx, in, asActivities)
}

// deliveryMode says how deliverBatches runs DeliverBatch.
type deliveryMode int

const (
	// asActivities: activities, retried by the server.
	asActivities deliveryMode = iota
	// asLocalActivities: local activities, retried inside the workflow
	// task (SendAlert version 2).
	asLocalActivities
	// onceLocally: a local activity's one attempt, then, after an error a
	// retry may fix (a provider or the file store down, temporary failures
	// recorded as Retrying), the other attempts as an activity, counting on
	// from the first (SendAlert version 3, executeOnceLocally).
	onceLocally
)

// deliverBatches runs the DeliverBatch activities of a chunk, at most
// Parallelism at once, and stops starting new ones after the first error,
// as mode says.
func deliverBatches(ctx workflow.Context, in ChunkInput, mode deliveryMode) (ChunkOutcome, error) {
	var out ChunkOutcome
	actx := deliveryOptions(ctx, in.MaxAttempts)
	lctx := localDeliveryOptions(ctx, in.MaxAttempts)
	var a *activities.Activities
	type item struct {
		channel string
		batch   int64
	}
	var items []item
	for b := in.FromBatch; b < in.ToBatch; b++ {
		for _, ch := range in.Channels {
			items = append(items, item{ch, b})
		}
	}
	par := max(in.Parallelism, 1)
	sel := workflow.NewSelector(ctx)
	pending, next := 0, 0
	var firstErr error
	for (next < len(items) && firstErr == nil) || pending > 0 {
		for pending < par && next < len(items) && firstErr == nil {
			it := items[next]
			lo := it.batch * int64(in.BatchSize)
			hi := min(lo+int64(in.BatchSize), in.Recipients)
			bin := activities.BatchInput{
				AlertRef: in.AlertRef, Channel: it.channel, Cycle: in.Cycle, Lo: lo, Hi: hi,
				Earlier: in.Earlier, MaxAttempts: in.MaxAttempts,
			}
			var f workflow.Future
			switch mode {
			case asLocalActivities:
				f = workflow.ExecuteLocalActivity(lctx, a.DeliverBatch, bin)
			case onceLocally:
				// Retries count on from the local attempt.
				rest := bin
				rest.PriorAttempts = 1
				f = executeOnceLocally(actx, a.DeliverBatch, bin, rest)
			default:
				f = workflow.ExecuteActivity(actx, a.DeliverBatch, bin)
			}
			sel.AddFuture(f, func(f workflow.Future) {
				pending--
				var o activities.BatchOutcome
				if err := f.Get(ctx, &o); err != nil {
					if firstErr == nil {
						firstErr = err
					}
					return
				}
				out.Sent += o.Sent
				out.Failed += o.Failed
				out.Skipped += o.Skipped
			})
			pending++
			next++
		}
		sel.Select(ctx)
	}
	return out, firstErr
}

// MaxRedialRounds bounds the redial rounds of one cycle (each a short
// activity and a timer until the next redial is due); maxRingPolls bounds
// the looks while calls ring, apart from them, so that polling never uses
// up the redials.
const (
	MaxRedialRounds = 100
	maxRingPolls    = 100
)

// RedialWaitsChange names the redial loop that also waits for calls still
// ringing (version 1): their outcome comes by callback, and a busy or
// unanswered one asks for a redial only then. Before it the loop ended as
// soon as no call was waiting to be dialled again, so a busy callback that
// came after that was never redialled. Histories written before replay the
// old loop.
const RedialWaitsChange = "redial-waits-for-ringing"

// Polling while calls ring starts at ringPollFirst and doubles up to
// ringPollMax (a redial is due RedialSeconds, at least 30 s, after the
// busy callback, so a late look costs at most this much). A call counts as
// ringing for voice.RingWindow after it was dialled (RedialCalls).
const (
	ringPollFirst = 2 * time.Second
	ringPollMax   = 30 * time.Second
)

// redialCalls runs RedialCalls until none of the alert's calls is ringing
// or waiting for a redial: busy and unanswered calls with attempts left are
// dialled again when due. It ends after MaxRedialRounds redial rounds or
// maxRingPolls looks whatever is left, with a warning: such calls keep
// their delivery as it is.
func redialCalls(ctx, actx workflow.Context, plan activities.AlertPlan, ref activities.AlertRef) error {
	calls := false
	for _, ch := range plan.Channels {
		if ch == "voice" || ch == "etn" {
			calls = true
		}
	}
	if !calls {
		return nil
	}
	waitRinging := workflow.GetVersion(ctx, RedialWaitsChange, workflow.DefaultVersion, 1) >= 1
	var a *activities.Activities
	poll := ringPollFirst
	for rounds, polls := 0, 0; rounds < MaxRedialRounds && polls < maxRingPolls; {
		var out activities.RedialOutcome
		if err := workflow.ExecuteActivity(actx, a.RedialCalls, ref).Get(ctx, &out); err != nil {
			return err
		}
		ringing := waitRinging && out.Ringing > 0
		if out.NextDue.IsZero() && !ringing {
			return nil
		}
		if out.Redialled > 0 {
			poll = ringPollFirst
		}
		var wait time.Duration
		if !out.NextDue.IsZero() {
			wait = max(out.NextDue.Sub(workflow.Now(ctx)), time.Second)
		}
		if ringing && (wait == 0 || poll < wait) {
			wait = poll
			poll = min(2*poll, ringPollMax)
			polls++
		} else {
			rounds++
		}
		if err := workflow.Sleep(ctx, wait); err != nil {
			return err
		}
	}
	workflow.GetLogger(ctx).Warn("redial step ended with calls left", "tenant", ref.Tenant, "alert", ref.AlertID)
	return nil
}

// The default BatchBounds of a batch-progress sweep: 1,000 rows a
// statement, at most 10,000 a run.
const (
	BatchProgressBatch   = 1000
	BatchProgressBatches = 10
)

// BatchProgressSweep deletes what delivery batches run as local activities
// kept of their progress in PostgreSQL and no batch will read
// (activities.SweepBatchProgress): the rows of alerts that have ended or
// are gone, and rows not written for a day (storage.BatchProgressMaxAge),
// which a workflow terminated by hand, or one that failed without ending
// its alert, leaves. It takes batch after batch while they come back full.
// A Temporal schedule runs it every hour.
func BatchProgressSweep(ctx workflow.Context, in BatchBounds) (int64, error) {
	b := in.or(BatchBounds{Batch: BatchProgressBatch, Batches: BatchProgressBatches})
	var a *activities.Activities
	return inBatches(ctx, a.SweepBatchProgress, b, func(total *int64, n int64) bool {
		*total += n
		return n >= int64(b.Batch)
	})
}
