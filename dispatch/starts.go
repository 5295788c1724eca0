package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/workflows"
)

// Waker wakes a Starter in the same process right after a start request
// commits, so the start does not wait for a notification or a poll. The
// zero of *Waker (nil) is a Waker that wakes nothing.
type Waker struct{ c chan struct{} }

// NewWaker returns a Waker.
func NewWaker() *Waker { return &Waker{c: make(chan struct{}, 1)} }

// Wake asks the Starter to look for start requests now.
func (w *Waker) Wake() {
	if w == nil {
		return
	}
	nudge(w.c)
}

func (w *Waker) ch() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.c
}

// Starter turns the workflow-start outbox (storage.EnqueueStart) into
// workflow executions. Like Dispatcher it claims requests with FOR UPDATE
// SKIP LOCKED, so several processes share the work, and starts each
// workflow under its business id, so a start repeated after a crash
// (between the start and the commit that deletes the request) finds the
// workflow already there: a request is carried out at least once and its
// workflow runs once.
//
// It looks for requests when Wake is woken (the API of the same process,
// right after commit), when PostgreSQL notifies storage.StartsChannel (the
// API of another process), and every Interval (the safety net, and the
// retry of requests Temporal refused).
type Starter struct {
	DB        *storage.DB
	Temporal  client.Client
	TaskQueue string
	// ListenURL, when not empty, is the database URL to LISTEN on for new
	// requests.
	ListenURL string
	Wake      *Waker
	// Interval is the pause between polls when nothing wakes the starter.
	Interval time.Duration
	// Batch is the most requests claimed at once; Concurrency the most
	// starts in flight.
	Batch, Concurrency int
	// Eager asks Temporal to hand the first workflow task straight to a
	// worker of this process's client when it has a free slot (the starter
	// then runs in the worker process).
	Eager  bool
	Logger *slog.Logger
}

// Run starts workflows until ctx ends: urgent requests (Emergency alerts,
// verification codes) in a loop of their own, so they never wait behind a
// batch of routine starts, and the others in a second loop. Every wake-up
// reaches both.
func (s *Starter) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	laneOf := func(urgent bool) lane {
		return lane{
			once: func(ctx context.Context) (bool, error) {
				n, err := s.DispatchOnce(ctx, urgent)
				return n >= batchSize(s.Batch), err
			},
			warn: func(err error) { s.Logger.Warn("start workflows", "urgent", urgent, "err", err) }}
	}
	poll(ctx, interval, s.Wake.ch(), s.listen(ctx), laneOf(true), laneOf(false))
}

// listen returns a channel that receives when another process commits a
// start request, or nil when ListenURL is empty. The listener reconnects
// by itself; a reconnection is reported as a notification, so requests
// committed while it was away are not left to the poll.
func (s *Starter) listen(ctx context.Context) <-chan struct{} {
	if s.ListenURL == "" {
		return nil
	}
	l := pq.NewListener(s.ListenURL, 10*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && ctx.Err() == nil {
			s.Logger.Warn("listen for workflow starts", "event", ev, "err", err)
		}
	})
	if err := l.Listen(storage.StartsChannel); err != nil {
		s.Logger.Warn("listen for workflow starts; polling only", "err", err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer l.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-l.Notify:
			}
			nudge(out)
		}
	}()
	return out
}

// DispatchOnce carries out one batch of due start requests, the urgent ones
// or the others, and returns how many it claimed. A request whose start
// fails stays, due again after a back-off; the others are deleted.
func (s *Starter) DispatchOnce(ctx context.Context, urgent bool) (int, error) {
	var n int
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		reqs, err := storage.ClaimStarts(ctx, tx, batchSize(s.Batch), urgent)
		if err != nil || len(reqs) == 0 {
			return err
		}
		errs := make([]error, len(reqs))
		var g errgroup.Group
		g.SetLimit(concurrency(s.Concurrency))
		for i, r := range reqs {
			g.Go(func() error {
				errs[i] = s.start(ctx, r)
				return nil
			})
		}
		_ = g.Wait()
		var done []int64
		for i, r := range reqs {
			if errs[i] == nil {
				done = append(done, r.ID)
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Logger.Warn("workflow start failed; retrying later", "workflow_id", r.WorkflowID, "attempts", r.Attempts+1, "err", errs[i])
			if err := storage.DeferStart(ctx, tx, r.ID, errs[i].Error(), backoff(r.Attempts)); err != nil {
				return err
			}
		}
		n = len(reqs)
		return storage.DeleteStarts(ctx, tx, done)
	})
	return n, err
}

// clockSkew is how far the clocks of PostgreSQL, which dates a start
// request, and of the Temporal server, which dates a run, may differ.
const clockSkew = time.Minute

// takenEarlier reports whether a run that began at started, found holding
// the workflow id of a request written at requested, is another's: it
// began before the request, by more than the two clocks may differ, so a
// start repeated right after a crash is never taken for one.
func takenEarlier(started, requested time.Time) bool {
	return started.Before(requested.Add(-clockSkew))
}

// backoff is the wait before the next attempt of a request that failed
// attempts times before: 1s, 2s, 4s ... up to a minute.
func backoff(attempts int) time.Duration {
	d := time.Second << min(attempts, 6)
	return min(d, time.Minute)
}

// Options returns the start options of r on taskQueue: its business id,
// its priority, and its tenant as the fairness key, so one tenant's flood
// does not starve the others. Urgent work (Emergency alerts, verification
// codes) goes to the urgent lane beside taskQueue, whose worker slots
// NonEmergency work cannot take.
func Options(r storage.WorkflowStart, taskQueue string) client.StartWorkflowOptions {
	if storage.IsUrgent(r.Priority) {
		taskQueue = workflows.UrgentQueue(taskQueue)
	}
	o := client.StartWorkflowOptions{
		ID:        r.WorkflowID,
		TaskQueue: taskQueue,
		Priority:  temporal.Priority{PriorityKey: r.Priority, FairnessKey: r.TenantID},
	}
	if r.SignalName == "" {
		// A workflow of this id that ran already is not run again.
		o.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	}
	return o
}

func (s *Starter) start(ctx context.Context, r storage.WorkflowStart) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	o := Options(r, s.TaskQueue)
	in := json.RawMessage(r.Input)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if r.SignalName != "" {
		if s.Eager {
			// Start first, eagerly: the input asks for what the signal
			// does, so a new run needs no signal and its first task skips
			// the task queue. A run already going gets the signal.
			o.EnableEagerStart, o.WorkflowExecutionErrorWhenAlreadyStarted = true, true
			// A run that ends between the two calls is started again.
			var gone *serviceerror.NotFound
			for try := 0; ; try++ {
				_, err := s.Temporal.ExecuteWorkflow(sctx, o, r.WorkflowType, in)
				if err == nil {
					return nil
				}
				if !errors.As(err, &started) {
					return fmt.Errorf("start %s: %w", r.WorkflowType, err)
				}
				err = s.Temporal.SignalWorkflow(sctx, r.WorkflowID, "", r.SignalName, json.RawMessage(r.SignalInput))
				if err == nil {
					return nil
				}
				if !errors.As(err, &gone) || try > 0 {
					return fmt.Errorf("signal %s: %w", r.WorkflowType, err)
				}
			}
		}
		// Signal-with-start delivers the signal to the running workflow or
		// starts one; the workflow ignores a signal it has seen.
		_, err := s.Temporal.SignalWithStartWorkflow(sctx, r.WorkflowID, r.SignalName, json.RawMessage(r.SignalInput), o, r.WorkflowType, in)
		if err != nil {
			return fmt.Errorf("signal-with-start %s: %w", r.WorkflowType, err)
		}
		return nil
	}
	o.EnableEagerStart = s.Eager
	_, err := s.Temporal.ExecuteWorkflow(sctx, o, r.WorkflowType, in)
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("start %s: %w", r.WorkflowType, err)
	}
	if err != nil {
		s.checkAlreadyStarted(sctx, r, started.RunId)
	}
	return nil
}

// checkAlreadyStarted looks at the run that holds r's workflow id when the
// start found one. A start repeated after a crash finds the run it started,
// which began after the request was written. A run that began before is
// another's (takenEarlier): its id was handed out again (workflow ids carry
// a random tag so that this does not happen), and r's workflow will never
// run. That is logged as an error with the workflow id; the request is done
// all the same, since starting it again cannot succeed.
func (s *Starter) checkAlreadyStarted(ctx context.Context, r storage.WorkflowStart, runID string) {
	d, err := s.Temporal.DescribeWorkflowExecution(ctx, r.WorkflowID, runID)
	if err != nil {
		s.Logger.Warn("describe the workflow that was already started", "workflow_id", r.WorkflowID, "err", err)
		return
	}
	info := d.GetWorkflowExecutionInfo()
	if started := info.GetStartTime().AsTime(); info.GetStartTime() != nil && takenEarlier(started, r.CreatedAt) {
		s.Logger.Error("workflow id taken by an earlier run: the request's workflow was not started",
			"workflow_id", r.WorkflowID, "workflow_type", r.WorkflowType, "run_id", info.GetExecution().GetRunId(),
			"run_started", started, "requested", r.CreatedAt)
	}
}
