// Package worker connects to Temporal and runs tocsin's workflows and
// activities in two lanes: the task queue, and beside it the urgent lane
// (Emergency alerts and verification codes) with capacity of its own.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
	"github.com/tocsin/tocsin/workflows"
)

// DialConfig says where Temporal is and how payloads are encrypted.
type DialConfig struct {
	Address, Namespace string
	// Codec encrypts every payload the client writes and decrypts what it
	// reads; required, so no tocsin client writes personal data in clear.
	Codec *payloadcrypt.Codec
}

// Dial connects a Temporal client whose SDK metrics go to reg.
func Dial(ctx context.Context, c DialConfig, logger *slog.Logger, reg prometheus.Registerer) (client.Client, error) {
	if c.Codec == nil {
		return nil, errors.New("connect to temporal: no payload codec")
	}
	cl, err := client.DialContext(ctx, client.Options{
		HostPort:         c.Address,
		Namespace:        c.Namespace,
		Logger:           log.NewStructuredLogger(logger.With("component", "temporal")),
		MetricsHandler:   NewMetricsHandler(reg),
		DataConverter:    c.Codec.DataConverter(),
		FailureConverter: c.Codec.FailureConverter(),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s: %w", c.Address, err)
	}
	return cl, nil
}

// Registry is where workflows and activities are registered; a Temporal
// worker and the test environment both are one.
type Registry interface {
	RegisterWorkflow(w any)
	RegisterActivity(a any)
}

// Register adds every workflow and the activities of acts to r.
func Register(r Registry, acts *activities.Activities) {
	r.RegisterWorkflow(workflows.Smoke)
	r.RegisterWorkflow(workflows.SendAlert)
	r.RegisterWorkflow(workflows.DeliverChunk)
	r.RegisterWorkflow(workflows.SendCapUpdate)
	r.RegisterWorkflow(workflows.HookDelivery)
	r.RegisterWorkflow(workflows.HookHistoryRetention)
	r.RegisterWorkflow(workflows.ProcessFile)
	r.RegisterWorkflow(workflows.UploadOrphanSweep)
	r.RegisterWorkflow(workflows.Verification)
	r.RegisterWorkflow(workflows.NonceRetention)
	r.RegisterWorkflow(workflows.BatchProgressSweep)
	r.RegisterActivity(acts)
}

// Options tunes a worker.
type Options struct {
	TaskQueue     string
	MaxActivities int
	// UrgentActivities bounds the activities (and, separately, the local
	// activities) of the urgent lane that Start runs beside TaskQueue.
	UrgentActivities int
	// MaxWorkflowTasks and WorkflowTaskPollers, when not zero, bound the
	// workflow tasks run at once and the polls for them.
	MaxWorkflowTasks, WorkflowTaskPollers int
}

// Pollers per task type. Many small alerts make many short tasks: with the
// SDK's default of two pollers a task often waits for a poll to come back;
// eight long polls per type cost a few goroutines and keep a poller waiting
// on the server when a task arrives (sync match).
const (
	workflowTaskPollers = 8
	activityTaskPollers = 8
)

// heartbeatThrottle is the longest a heartbeat an activity records waits
// before it reaches the server (the SDK's own is 0.8 × the heartbeat
// timeout, 8 s for a delivery batch). A delivery batch's heartbeat details
// say which messages have left, and an attempt that follows a dead worker
// sends again only those the server had not heard of.
const heartbeatThrottle = 2 * time.Second

// New builds a worker on the task queue with everything registered.
// Workflow tasks are short and CPU-light, so unless Options say otherwise
// the SDK's default of 1,000 concurrent workflow tasks and its sticky cache
// of 10,000 workflows stay:
// a small alert's SendAlert stays cached between its two workflow tasks.
// Activities and local activities (database-only alert steps) are bounded
// by MaxActivities, which should match the database connection pool.
func New(cl client.Client, o Options, acts *activities.Activities) sdkworker.Worker {
	acts.LocalSlots = o.MaxActivities
	w := sdkworker.New(cl, o.TaskQueue, SDKOptions(o))
	Register(w, acts)
	return w
}

// Start runs the two lanes of a worker process on cl and returns what stops
// them: acts on o.TaskQueue with o.MaxActivities slots, and urgent on
// workflows.UrgentQueue(o.TaskQueue) with o.UrgentActivities slots of its
// own. Give each lane activities with provider clients and database
// connections of its own (app.StartWorker does), so urgent work does not
// wait for a connection either.
func Start(cl client.Client, o Options, acts, urgent *activities.Activities) (stop func(), err error) {
	uo := o
	uo.TaskQueue, uo.MaxActivities = workflows.UrgentQueue(o.TaskQueue), o.UrgentActivities
	u := New(cl, uo, urgent)
	if err := u.Start(); err != nil {
		return nil, fmt.Errorf("start urgent worker: %w", err)
	}
	w := New(cl, o, acts)
	if err := w.Start(); err != nil {
		u.Stop()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return func() { w.Stop(); u.Stop() }, nil
}

// SDKOptions are the Temporal worker options New uses.
func SDKOptions(o Options) sdkworker.Options {
	pollers := workflowTaskPollers
	if o.WorkflowTaskPollers > 0 {
		pollers = o.WorkflowTaskPollers
	}
	return sdkworker.Options{
		MaxConcurrentActivityExecutionSize:      o.MaxActivities,
		MaxConcurrentLocalActivityExecutionSize: o.MaxActivities,
		MaxConcurrentWorkflowTaskExecutionSize:  o.MaxWorkflowTasks,
		MaxConcurrentWorkflowTaskPollers:        pollers,
		MaxConcurrentActivityTaskPollers:        activityTaskPollers,
		MaxHeartbeatThrottleInterval:            heartbeatThrottle,
	}
}
