// Package dispatch carries out the outboxes: Starter turns the
// workflow-start outbox into workflow executions (alerts, verification
// codes, file processing), and Dispatcher turns the events outbox into hook
// deliveries: it claims undispatched events, starts a HookDelivery workflow
// for every matching active subscription of the event's tenant and marks
// the events dispatched. It also keeps the maintenance schedules: the
// purge of old hook history, the sweep of orphaned upload objects, the
// prune of old verification nonces and the sweep of delivery batches'
// progress that no batch will read.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/workflows"
)

// Dispatcher claims events with FOR UPDATE SKIP LOCKED, so several workers
// share the work, and starts deliveries under their business ids, so a
// start repeated after a crash (between the start and the commit) or
// after a failed start of the same event finds the delivery already
// there: events are dispatched at least once and delivered once per
// subscription.
type Dispatcher struct {
	DB        *storage.DB
	Temporal  client.Client
	TaskQueue string
	// Retries is the retry schedule given to each delivery.
	Retries []time.Duration
	// Interval is the pause between polls that found nothing to do.
	Interval time.Duration
	// Batch is the most deliveries (workflow starts) one claim of events
	// asks for, 100 when not set (an event alone may ask for more: a claim
	// takes at least one); Concurrency the most starts in flight (16 when
	// not set).
	Batch, Concurrency int
	Logger             *slog.Logger
}

// Run dispatches until ctx ends: a claim every Interval, and claim after
// claim while they stop at their budget and every start goes through.
func (d *Dispatcher) Run(ctx context.Context) {
	interval := d.Interval
	if interval <= 0 {
		interval = time.Second
	}
	poll(ctx, interval, nil, nil, lane{
		once: func(ctx context.Context) (bool, error) {
			c, err := d.dispatch(ctx)
			return c.Full && c.Deferred == 0, err
		},
		warn: func(err error) { d.Logger.Warn("dispatch hook events", "err", err) }})
}

// EventOutbox is the events outbox the Dispatcher carries out
// (storage.EventOutbox).
type EventOutbox interface {
	Dispatch(ctx context.Context, budget int, deliver func(events []storage.ClaimedEvent) []error) (storage.EventClaim, error)
}

var _ EventOutbox = (*storage.EventOutbox)(nil)

// DispatchOnce handles one claim of undispatched events, of at most Batch
// deliveries (storage.EventOutbox.Dispatch), and returns how many events
// it marked dispatched. It starts the deliveries of the claim in the order
// the events were claimed (the tenants' turns), each event's to every
// subscription, with at most Concurrency starts in flight, so that a
// claim costs the round trips to Temporal of its slowest starts rather
// than of all of them.
//
// A start that fails holds back only its own event: no other start of
// that event is begun, the event stays undispatched and is claimed again
// after a back-off (1 s doubling to a minute), and the claim's other
// events are marked dispatched when all their starts went through. The
// starts of the event that did go through are found there next time. An
// event whose starts keep failing therefore costs one attempt a minute
// and never holds its tenant's later events, nor another tenant's. When
// Concurrency starts (of two events or more) have failed and none has gone
// through, Temporal is taken to be down: no further start is begun, and
// the events not tried stay as they were, due, so an outage costs a claim
// a round of starts rather than every start's timeout in turn.
func (d *Dispatcher) DispatchOnce(ctx context.Context) (int, error) {
	c, err := d.dispatch(ctx)
	return c.Dispatched, err
}

func (d *Dispatcher) dispatch(ctx context.Context) (storage.EventClaim, error) {
	var outbox EventOutbox = &storage.EventOutbox{DB: d.DB}
	return outbox.Dispatch(ctx, batchSize(d.Batch), func(events []storage.ClaimedEvent) []error {
		limit := concurrency(d.Concurrency)
		var (
			mu                            sync.Mutex
			started, failed, failedEvents int                          // starts that went through, starts and events that failed
			errs                          = make([]error, len(events)) // the first failed start of each event
			begun                         = make([]int, len(events))   // the starts of each event begun
		)
		failedOf := func(i int) bool { mu.Lock(); defer mu.Unlock(); return errs[i] != nil }
		down := func() bool { mu.Lock(); defer mu.Unlock(); return failed >= limit && failedEvents >= 2 && started == 0 }
		var g errgroup.Group
		g.SetLimit(limit)
	claim:
		for i, e := range events {
			for _, sub := range e.Subscriptions {
				if ctx.Err() != nil || down() {
					break claim
				}
				if failedOf(i) {
					break
				}
				begun[i]++
				g.Go(func() error {
					err := d.start(ctx, sub, e.Event)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						started++
						return nil
					}
					failed++
					if errs[i] == nil {
						errs[i] = err
						failedEvents++
					}
					return nil
				})
			}
		}
		_ = g.Wait()
		for i, e := range events {
			if errs[i] != nil {
				d.Logger.Warn("hook delivery start failed; the event is tried again later", "event", e.ID, "tenant", e.Tenant,
					"attempts", e.Attempts+1, "err", errs[i])
			} else if begun[i] < len(e.Subscriptions) {
				errs[i] = storage.ErrNotTried
			}
		}
		return errs
	})
}

func (d *Dispatcher) start(ctx context.Context, sub int64, e storage.Event) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := d.Temporal.ExecuteWorkflow(sctx, HookOptions(sub, e, d.TaskQueue), workflows.HookDelivery, workflows.HookDeliveryInput{
		Tenant: e.Tenant, SubscriptionID: sub, Retries: d.Retries,
		Event: activities.HookEvent{ID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt, Payload: e.Payload},
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start hook delivery: %w", err)
	}
	return nil
}

// HookOptions returns the start options of the delivery of event e to
// subscription sub on taskQueue: its business id, started once, with the
// default priority and the event's tenant as the fairness key, as every
// workflow tocsin starts has, so that within the task queue one tenant's
// thousands of deliveries do not hold another tenant's behind them.
func HookOptions(sub int64, e storage.Event, taskQueue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    workflows.HookDeliveryID(sub, e.ID),
		TaskQueue:             taskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		Priority:              temporal.Priority{FairnessKey: e.Tenant},
	}
}

// RetentionScheduleID is the id of the schedule that purges hook history
// for the workers of taskQueue.
func RetentionScheduleID(taskQueue string) string { return "hook-history-retention-" + taskQueue }

// OrphanSweepScheduleID is the id of the schedule that removes the objects
// of uploads whose process died, for the workers of taskQueue.
func OrphanSweepScheduleID(taskQueue string) string { return "upload-orphan-sweep-" + taskQueue }

// NonceRetentionScheduleID is the id of the schedule that prunes old
// verification nonces for the workers of taskQueue.
func NonceRetentionScheduleID(taskQueue string) string { return "nonce-retention-" + taskQueue }

// BatchProgressSweepScheduleID is the id of the schedule that removes the
// progress of delivery batches that no batch will read, for the workers of
// taskQueue.
func BatchProgressSweepScheduleID(taskQueue string) string {
	return "batch-progress-sweep-" + taskQueue
}

// ScheduleIDs are the ids of the schedules EnsureSchedules keeps for the
// workers of taskQueue.
func ScheduleIDs(taskQueue string) []string {
	return []string{RetentionScheduleID(taskQueue), OrphanSweepScheduleID(taskQueue), NonceRetentionScheduleID(taskQueue),
		BatchProgressSweepScheduleID(taskQueue)}
}

// EnsureSchedules creates, unless they exist, the maintenance schedules of
// the workers of taskQueue: HookHistoryRetention, NonceRetention and
// BatchProgressSweep every hour and UploadOrphanSweep every 15 minutes,
// each skipping a run while the last one still runs.
func EnsureSchedules(ctx context.Context, c client.Client, taskQueue string) error {
	for _, s := range []struct {
		id       string
		every    time.Duration
		workflow any
		arg      any
	}{
		{RetentionScheduleID(taskQueue), time.Hour, workflows.HookHistoryRetention, workflows.HookHistoryRetentionInput{Days: workflows.HookHistoryDays}},
		{OrphanSweepScheduleID(taskQueue), 15 * time.Minute, workflows.UploadOrphanSweep, workflows.BatchBounds{}},
		{NonceRetentionScheduleID(taskQueue), time.Hour, workflows.NonceRetention, workflows.BatchBounds{}},
		{BatchProgressSweepScheduleID(taskQueue), time.Hour, workflows.BatchProgressSweep, workflows.BatchBounds{}},
	} {
		_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID:      s.id,
			Spec:    client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.every}}},
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
			Action: &client.ScheduleWorkflowAction{
				ID:        s.id,
				Workflow:  s.workflow,
				Args:      []any{s.arg},
				TaskQueue: taskQueue,
			},
		})
		if err != nil && !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return fmt.Errorf("create schedule %s: %w", s.id, err)
		}
	}
	return nil
}
