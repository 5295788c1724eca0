// Package worker connects to Temporal and runs tocsin's workflows and
// activities on the task queue.
package worker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/workflows"
)

// DialConfig says where Temporal is.
type DialConfig struct {
	Address, Namespace string
}

// Dial connects a Temporal client whose SDK metrics go to reg.
func Dial(ctx context.Context, c DialConfig, logger *slog.Logger, reg prometheus.Registerer) (client.Client, error) {
	cl, err := client.DialContext(ctx, client.Options{
		HostPort:       c.Address,
		Namespace:      c.Namespace,
		Logger:         log.NewStructuredLogger(logger.With("component", "temporal")),
		MetricsHandler: NewMetricsHandler(reg),
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
	r.RegisterWorkflow(workflows.Verification)
	r.RegisterActivity(acts)
}

// Options tunes a worker.
type Options struct {
	TaskQueue     string
	MaxActivities int
	// MaxWorkflowTasks and WorkflowTaskPollers, when not zero, bound the
	// workflow tasks run at once and the polls for them.
	MaxWorkflowTasks, WorkflowTaskPollers int
}

// New builds a worker on the task queue with everything registered.
func New(cl client.Client, o Options, acts *activities.Activities) sdkworker.Worker {
	w := sdkworker.New(cl, o.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize:     o.MaxActivities,
		MaxConcurrentWorkflowTaskExecutionSize: o.MaxWorkflowTasks,
		MaxConcurrentWorkflowTaskPollers:       o.WorkflowTaskPollers,
	})
	Register(w, acts)
	return w
}
