package workflows

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
)

// errorLog keeps the messages a workflow logs at ERROR, with their key-values.
type errorLog struct {
	mu     sync.Mutex
	errors []string
}

func (l *errorLog) Debug(string, ...any) {}
func (l *errorLog) Info(string, ...any)  {}
func (l *errorLog) Warn(string, ...any)  {}
func (l *errorLog) Error(msg string, keyvals ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, fmt.Sprint(append([]any{msg}, keyvals...)...))
}

// errAlertIDReused is what an activity of the alert returns once its id
// is another alert's.
func errAlertIDReused() error {
	return temporal.NewApplicationErrorWithOptions("alert 7 of tenant 1 is another alert now", activities.ErrTypeAlertIDReused,
		temporal.ApplicationErrorOptions{NonRetryable: true, Category: temporal.ApplicationErrorCategoryBenign})
}

// TestSendAlertOfAnIDReusedEndsAndLogsItOnce: once the alert's id is
// another alert's (a database restore), the workflow ends with the
// activity's error at whichever step meets it, logs that once at ERROR
// with its workflow id (however many batches met it at once), and runs
// no FailAlert, which would find the other alert.
func TestSendAlertOfAnIDReusedEndsAndLogsItOnce(t *testing.T) {
	id := alert.WorkflowID("1", 7, "beforeaa")
	small := activities.AlertPlan{Recipients: 3, Channels: []string{"text"}, BatchSize: 1, Parallelism: 3, MaxAttempts: 3, Cycles: 1}
	big := activities.AlertPlan{Recipients: 100, Channels: []string{"text"}, BatchSize: 1, Parallelism: 8, MaxAttempts: 3, Cycles: 1}
	ok := func(context.Context, activities.BatchInput) (activities.BatchOutcome, error) {
		return activities.BatchOutcome{Sent: 1}, nil
	}
	reused := func(context.Context, activities.BatchInput) (activities.BatchOutcome, error) {
		return activities.BatchOutcome{}, errAlertIDReused()
	}
	for _, c := range []struct {
		name    string
		prepare func(activities.AlertRef) (activities.AlertPlan, error)
		deliver func(context.Context, activities.BatchInput) (activities.BatchOutcome, error)
		finish  bool
	}{
		{"PrepareAlert", func(activities.AlertRef) (activities.AlertPlan, error) {
			return activities.AlertPlan{}, errAlertIDReused()
		}, ok, false},
		{"DeliverBatch, three at once", fixed(small), reused, false},
		{"DeliverBatch in a child", fixed(big), reused, false},
		{"CompleteAlert", fixed(small), ok, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			logs := &errorLog{}
			s.SetLogger(logs)
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflow(DeliverChunk)
			env.RegisterActivity(&activities.Activities{})
			var a *activities.Activities
			env.OnActivity(a.PrepareAlert, mock.Anything, mock.Anything).Return(
				func(_ context.Context, ref activities.AlertRef) (activities.AlertPlan, error) { return c.prepare(ref) })
			env.OnActivity(a.StartCycle, mock.Anything, mock.Anything).Return(nil)
			env.OnActivity(a.DeliverBatch, mock.Anything, mock.Anything).Return(c.deliver)
			if c.finish {
				env.OnActivity(a.FinishFirstCycle, mock.Anything, mock.Anything).Return("Sent", nil)
				env.OnActivity(a.CompleteAlert, mock.Anything, mock.Anything).Return(errAlertIDReused())
			}
			failed := false
			env.OnActivity(a.FailAlert, mock.Anything, mock.Anything).Return(func(context.Context, activities.FailAlertInput) error {
				failed = true
				return nil
			}).Maybe()
			env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
			env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7, Tag: "beforeaa"})
			if err := env.GetWorkflowError(); !env.IsWorkflowCompleted() || !activities.IsAlertIDReused(err) {
				t.Fatalf("the workflow ended with %v", err)
			}
			if failed {
				t.Error("FailAlert ran")
			}
			if len(logs.errors) != 1 || !strings.Contains(logs.errors[0], "another alert's") || !strings.Contains(logs.errors[0], id) {
				t.Errorf("logged at ERROR %q, want once, with the workflow id %s", logs.errors, id)
			}
		})
	}
}

// TestSendCapUpdateOfAnIDReusedEndsAndLogsItOnce: a CAP update of an
// alert whose id is another alert's now ends with its activity's error,
// logged once at ERROR with the workflow id.
func TestSendCapUpdateOfAnIDReusedEndsAndLogsItOnce(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	logs := &errorLog{}
	s.SetLogger(logs)
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&activities.Activities{})
	var a *activities.Activities
	env.OnActivity(a.DeliverCapUpdate, mock.Anything, mock.Anything).Return(activities.CapUpdateOutcome{}, errAlertIDReused())
	id := CapUpdateWorkflowID(alert.WorkflowID("1", 7, "beforeaa"), 1)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	env.ExecuteWorkflow(SendCapUpdate, activities.CapUpdateInput{AlertRef: activities.AlertRef{Tenant: "1", AlertID: 7, Tag: "beforeaa"}, MsgType: "Cancel", Seq: 1})
	if err := env.GetWorkflowError(); !activities.IsAlertIDReused(err) {
		t.Fatalf("the workflow ended with %v", err)
	}
	if len(logs.errors) != 1 || !strings.Contains(logs.errors[0], id) {
		t.Errorf("logged at ERROR %q, want once, with the workflow id %s", logs.errors, id)
	}
}
