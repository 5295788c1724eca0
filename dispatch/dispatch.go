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
// start repeated after a crash (between the start and the commit) finds the
// delivery already there: events are dispatched at least once and
// delivered once per subscription.
type Dispatcher struct {
	DB        *storage.DB
	Temporal  client.Client
	TaskQueue string
	// Retries is the retry schedule given to each delivery.
	Retries []time.Duration
	// Interval is the pause between polls that found nothing to do.
	Interval time.Duration
	// Batch is the most events claimed at once (100 when not set);
	// Concurrency the most starts in flight (16 when not set).
	Batch, Concurrency int
	Logger             *slog.Logger
}

// Run dispatches until ctx ends: a batch every Interval, and batch after
// batch while they come back full.
func (d *Dispatcher) Run(ctx context.Context) {
	interval := d.Interval
	if interval <= 0 {
		interval = time.Second
	}
	poll(ctx, interval, nil, nil, lane{
		once: func(ctx context.Context) (bool, error) {
			n, err := d.DispatchOnce(ctx)
			return n >= batchSize(d.Batch), err
		},
		warn: func(err error) { d.Logger.Warn("dispatch hook events", "err", err) }})
}

// EventOutbox is the events outbox the Dispatcher carries out
// (storage.EventOutbox).
type EventOutbox interface {
	Dispatch(ctx context.Context, limit int, deliver func(events []storage.ClaimedEvent) error) (int, error)
}

var _ EventOutbox = (*storage.EventOutbox)(nil)

// DispatchOnce handles one batch of undispatched events and returns how
// many it marked dispatched. It starts the deliveries of the batch in the
// order the events were claimed (the tenants' turns), each event's to
// every subscription, with at most Concurrency starts in flight, so that
// a batch costs the round trips to Temporal of its slowest starts rather
// than of all of them. When a start fails no other is begun and the whole
// batch stays undispatched, to be tried again: the deliveries started
// meanwhile are found there then.
func (d *Dispatcher) DispatchOnce(ctx context.Context) (int, error) {
	var outbox EventOutbox = &storage.EventOutbox{DB: d.DB}
	return outbox.Dispatch(ctx, batchSize(d.Batch), func(events []storage.ClaimedEvent) error {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(concurrency(d.Concurrency))
		for _, e := range events {
			for _, sub := range e.Subscriptions {
				if gctx.Err() != nil {
					return g.Wait()
				}
				g.Go(func() error { return d.start(gctx, sub, e.Event) })
			}
		}
		return g.Wait()
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
