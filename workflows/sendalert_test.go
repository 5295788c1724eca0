package workflows

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
)

type batchLog struct {
	mu      sync.Mutex
	batches []activities.BatchInput
}

func (l *batchLog) add(in activities.BatchInput) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches = append(l.batches, in)
}

func (l *batchLog) keys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, b := range l.batches {
		out = append(out, fmt.Sprintf("%s:%d:%d-%d", b.Channel, b.Cycle, b.Lo, b.Hi))
	}
	sort.Strings(out)
	return out
}

// newEnv mocks the activities: prepare answers PrepareAlert; finish says
// whether the run is expected to reach FinishFirstCycle and CompleteAlert.
func newEnv(prepare func(activities.AlertRef) (activities.AlertPlan, error), log *batchLog, finish bool) *testsuite.TestWorkflowEnvironment {
	return newEnvDelivering(prepare, func(_ context.Context, in activities.BatchInput) (activities.BatchOutcome, error) {
		log.add(in)
		return activities.BatchOutcome{Sent: int(in.Hi - in.Lo)}, nil
	}, finish)
}

// newEnvDelivering is newEnv with deliver answering DeliverBatch.
func newEnvDelivering(prepare func(activities.AlertRef) (activities.AlertPlan, error),
	deliver func(context.Context, activities.BatchInput) (activities.BatchOutcome, error), finish bool) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(DeliverChunk)
	env.RegisterActivity(&activities.Activities{})
	var a *activities.Activities
	env.OnActivity(a.PrepareAlert, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ref activities.AlertRef) (activities.AlertPlan, error) { return prepare(ref) })
	env.OnActivity(a.StartCycle, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(a.DeliverBatch, mock.Anything, mock.Anything).Return(deliver)
	if finish {
		env.OnActivity(a.FinishFirstCycle, mock.Anything, mock.Anything).Return("Sent", nil).Once()
		env.OnActivity(a.CompleteAlert, mock.Anything, mock.Anything).Return(nil).Once()
	}
	return env
}

func fixed(p activities.AlertPlan) func(activities.AlertRef) (activities.AlertPlan, error) {
	return func(activities.AlertRef) (activities.AlertPlan, error) { return p, nil }
}

func TestSendAlertDeliversEveryBatchOnEveryChannel(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 2500, Channels: []string{"email", "text"}, BatchSize: 1000, Parallelism: 2, MaxAttempts: 3, Cycles: 1}
	env := newEnv(fixed(plan), log, true)
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: %v", env.GetWorkflowError())
	}
	want := []string{"email:1:0-1000", "email:1:1000-2000", "email:1:2000-2500", "text:1:0-1000", "text:1:1000-2000", "text:1:2000-2500"}
	if got := log.keys(); len(got) != len(want) || got[0] != want[0] || got[5] != want[5] {
		t.Fatalf("batches %v, want %v", got, want)
	}
	env.AssertExpectations(t)
}

func TestSendAlertWaitsForTheScheduleAndResendsInCycles(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 10, Channels: []string{"text"}, BatchSize: 10, Parallelism: 4, MaxAttempts: 3,
		Cycles: 3, CycleEvery: 5 * time.Minute}
	var prepared time.Time
	var env *testsuite.TestWorkflowEnvironment
	env = newEnv(func(activities.AlertRef) (activities.AlertPlan, error) {
		prepared = env.Now()
		return plan, nil
	}, log, true)
	sendAt := env.Now().Add(2 * time.Hour)
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7, SendAt: sendAt})
	if env.GetWorkflowError() != nil {
		t.Fatal(env.GetWorkflowError())
	}
	if prepared.Before(sendAt) {
		t.Fatalf("recipients resolved at %s, before the send time %s", prepared, sendAt)
	}
	if got := log.keys(); len(got) != 3 || got[0] != "text:1:0-10" || got[2] != "text:3:0-10" {
		t.Fatalf("batches %v", got)
	}
	if d := env.Now().Sub(sendAt); d < 10*time.Minute {
		t.Fatalf("cycles did not wait their interval: %s", d)
	}
}

func TestSendAlertSequentialChannelsPassEarlierOnes(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 5, Channels: []string{"text", "email"}, Sequential: true, BatchSize: 5, Parallelism: 4, MaxAttempts: 3, Cycles: 1}
	env := newEnv(fixed(plan), log, true)
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7})
	if env.GetWorkflowError() != nil {
		t.Fatal(env.GetWorkflowError())
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.batches) != 2 || log.batches[0].Channel != "text" || log.batches[1].Channel != "email" ||
		len(log.batches[1].Earlier) != 1 || log.batches[1].Earlier[0] != "text" {
		t.Fatalf("batches %+v", log.batches)
	}
}

func TestSendAlertContinuesAsNewPastItsChildLimit(t *testing.T) {
	oldChunk, oldChildren, oldInline := ChunkActivities, ChildrenPerRun, InlineActivities
	ChunkActivities, ChildrenPerRun, InlineActivities = 2, 2, 2
	defer func() { ChunkActivities, ChildrenPerRun, InlineActivities = oldChunk, oldChildren, oldInline }()
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 10, Channels: []string{"text"}, BatchSize: 1, Parallelism: 2, MaxAttempts: 3, Cycles: 1}
	env := newEnv(fixed(plan), log, false)
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7})
	var can *workflow.ContinueAsNewError
	if !errors.As(env.GetWorkflowError(), &can) {
		t.Fatalf("want continue-as-new, got %v", env.GetWorkflowError())
	}
	if got := log.keys(); len(got) != 4 {
		t.Fatalf("first run delivered %v", got)
	}
}

func TestSendAlertMarksTheAlertFailedWhenDeliveryFails(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(DeliverChunk)
	env.RegisterActivity(&activities.Activities{})
	var a *activities.Activities
	env.OnActivity(a.PrepareAlert, mock.Anything, mock.Anything).Return(activities.AlertPlan{Recipients: 1, Channels: []string{"text"}, BatchSize: 1, Parallelism: 1, MaxAttempts: 1, Cycles: 1}, nil)
	env.OnActivity(a.StartCycle, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(a.DeliverBatch, mock.Anything, mock.Anything).Return(activities.BatchOutcome{}, errors.New("database gone"))
	failed := false
	reason := ""
	env.OnActivity(a.FailAlert, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.FailAlertInput) error {
		failed, reason = in.AlertID == 7, in.Reason
		return nil
	})
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7})
	if env.GetWorkflowError() == nil || !failed {
		t.Fatalf("error %v, FailAlert called %v", env.GetWorkflowError(), failed)
	}
	// The alert's reason, shown by the API and sent to hooks, is ours; the
	// error's own text (and Temporal's around it) is only logged.
	if reason != FailedReason {
		t.Fatalf("the alert failed with %q, want %q", reason, FailedReason)
	}
}

// TestSendAlertRetriesALocalBatchAsAnActivity: a single-batch alert's
// batch gets one attempt as a local activity; after an error a retry may
// fix, the other attempts run as an activity, counting on from the first,
// so a failing provider or store never holds the workflow task through the
// retries' backoff (the SDK retries a local activity inside the task while
// its backoff is shorter than the task's timeout).
func TestSendAlertRetriesALocalBatchAsAnActivity(t *testing.T) {
	plan := activities.AlertPlan{Recipients: 1, Channels: []string{"email"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	var mu sync.Mutex
	var attempts []string
	env := newEnvDelivering(fixed(plan), func(ctx context.Context, in activities.BatchInput) (activities.BatchOutcome, error) {
		info := activity.GetInfo(ctx)
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, fmt.Sprintf("local=%v attempt=%d prior=%d", info.IsLocalActivity, info.Attempt, in.PriorAttempts))
		if len(attempts) < 3 {
			return activities.BatchOutcome{}, errors.New("1 temporary failures in email batch (0, 1]")
		}
		return activities.BatchOutcome{Sent: 1}, nil
	}, true)
	s := sendAlertSteps(t, env)
	want := "[local=true attempt=1 prior=0 local=false attempt=1 prior=1 local=false attempt=2 prior=1]"
	if got := fmt.Sprint(attempts); got != want {
		t.Fatalf("attempts %s, want %s", got, want)
	}
	if got := fmt.Sprint(s.remote); got != "[DeliverBatch DeliverBatch]" {
		t.Fatalf("activities %s, want the retries", got)
	}
	env.AssertExpectations(t)
}

// TestSendAlertReplaysTheShapeBeforeLocalOnce: histories of version 2
// retried a single batch inside the workflow task.
func TestSendAlertReplaysTheShapeBeforeLocalOnce(t *testing.T) {
	plan := activities.AlertPlan{Recipients: 1, Channels: []string{"email"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	calls := 0
	env := newEnvDelivering(fixed(plan), func(context.Context, activities.BatchInput) (activities.BatchOutcome, error) {
		calls++
		if calls < 2 {
			return activities.BatchOutcome{}, errors.New("temporary")
		}
		return activities.BatchOutcome{Sent: 1}, nil
	}, true)
	env.OnGetVersion(FewRoundTripsChange, workflow.DefaultVersion, 3).Return(workflow.Version(2))
	s := sendAlertSteps(t, env)
	if len(s.remote) != 0 || calls != 2 {
		t.Fatalf("activities %v after %d local attempts, want the retry inside the task", s.remote, calls)
	}
}

// steps records how a run executed its work: local activities, activities
// and child workflows, by name.
type steps struct {
	mu                      sync.Mutex
	local, remote, children []string
	// childIDs are the workflow ids of the children, in order.
	childIDs []string
}

func (s *steps) listen(env *testsuite.TestWorkflowEnvironment) {
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.local = append(s.local, info.ActivityType.Name)
	})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.remote = append(s.remote, info.ActivityType.Name)
	})
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.children = append(s.children, info.WorkflowType.Name)
		s.childIDs = append(s.childIDs, info.WorkflowExecution.ID)
	})
}

// sendAlertSteps runs SendAlert for alert 7 in env, fails the test unless
// the workflow completes, and returns the steps it took.
func sendAlertSteps(t *testing.T, env *testsuite.TestWorkflowEnvironment) *steps {
	t.Helper()
	var s steps
	s.listen(env)
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: %v", env.GetWorkflowError())
	}
	return &s
}

func TestSendAlertDeliversASingleBatchAlertInOneWorkflowTask(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 1, Channels: []string{"email"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	env := newEnv(fixed(plan), log, true)
	s := sendAlertSteps(t, env)
	if len(s.children) != 0 {
		t.Fatalf("a single-batch alert started children %v", s.children)
	}
	if len(s.remote) != 0 {
		t.Fatalf("activities %v, want none: every step runs in the workflow task", s.remote)
	}
	if got := fmt.Sprint(s.local); got != "[PrepareAlert StartCycle DeliverBatch FinishFirstCycle CompleteAlert]" {
		t.Fatalf("local activities %s", got)
	}
	if got := log.keys(); len(got) != 1 || got[0] != "email:1:0-1" {
		t.Fatalf("batches %v", got)
	}
	env.AssertExpectations(t)
}

func TestSendAlertFansABigAlertOutThroughChildren(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 100000, Channels: []string{"text"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	env := newEnv(fixed(plan), log, true)
	s := sendAlertSteps(t, env)
	if len(s.children) != 1 || s.children[0] != "DeliverChunk" {
		t.Fatalf("children %v, want one DeliverChunk", s.children)
	}
	if got := log.keys(); len(got) != 100 {
		t.Fatalf("%d batches, want 100", len(got))
	}
}

// TestSendAlertChildIDsKeepTheirFormWithoutATag: a workflow started
// without a tag (before tags came, still running or replayed) starts its
// children under the ids it did then, which a replay must find again; a
// tagged one's children carry the tag.
func TestSendAlertChildIDsKeepTheirFormWithoutATag(t *testing.T) {
	plan := activities.AlertPlan{Recipients: 100000, Channels: []string{"text"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	for tag, want := range map[string]string{"": "alert-1-7-c1-g0-b0", "k3x7q2ab": "alert-1-7-k3x7q2ab-c1-g0-b0"} {
		env := newEnv(fixed(plan), &batchLog{}, true)
		var s steps
		s.listen(env)
		env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1", AlertID: 7, Tag: tag})
		if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
			t.Fatalf("workflow: %v", env.GetWorkflowError())
		}
		if len(s.childIDs) != 1 || s.childIDs[0] != want {
			t.Fatalf("tag %q: children %v, want %s", tag, s.childIDs, want)
		}
	}
}

func TestSendAlertReplaysTheEarlierShape(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 1, Channels: []string{"email"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	env := newEnv(fixed(plan), log, true)
	env.OnGetVersion(FewRoundTripsChange, workflow.DefaultVersion, 3).Return(workflow.DefaultVersion)
	s := sendAlertSteps(t, env)
	if len(s.local) != 0 || len(s.children) != 1 {
		t.Fatalf("earlier shape ran local activities %v and children %v", s.local, s.children)
	}
	if got := fmt.Sprint(s.remote); got != "[PrepareAlert StartCycle DeliverBatch FinishFirstCycle CompleteAlert]" {
		t.Fatalf("activities %s", got)
	}
}

func TestSendAlertReplaysTheShapeBeforeOneTask(t *testing.T) {
	log := &batchLog{}
	plan := activities.AlertPlan{Recipients: 1, Channels: []string{"email"}, BatchSize: 1000, Parallelism: 8, MaxAttempts: 5, Cycles: 1}
	env := newEnv(fixed(plan), log, true)
	env.OnGetVersion(FewRoundTripsChange, workflow.DefaultVersion, 3).Return(workflow.Version(1))
	s := sendAlertSteps(t, env)
	if got := fmt.Sprint(s.remote); got != "[DeliverBatch]" {
		t.Fatalf("activities %s, want the batch as an activity", got)
	}
	if got := fmt.Sprint(s.local); got != "[PrepareAlert StartCycle FinishFirstCycle CompleteAlert]" {
		t.Fatalf("local activities %s", got)
	}
}

// TestSendAlertEndsAnAlertCancelledBeforeItsTime: when PrepareAlert finds the
// alert cancelled (the cancellation did not reach the workflow), nothing
// else runs.
func TestSendAlertEndsAnAlertCancelledBeforeItsTime(t *testing.T) {
	env := newEnv(fixed(activities.AlertPlan{Cancelled: true}), &batchLog{}, false)
	s := sendAlertSteps(t, env)
	if got := fmt.Sprint(s.local, s.remote, s.children); got != "[PrepareAlert] [] []" {
		t.Fatalf("steps %s", got)
	}
}
