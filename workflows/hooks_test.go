package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/workflows"
)

func TestHookDelivery(t *testing.T) {
	t.Parallel()
	schedule := []time.Duration{time.Minute, time.Hour, 5 * time.Hour}
	cases := []struct {
		name     string
		outcomes []string
		retries  []time.Duration
		attempts int
		outcome  string
		minTime  time.Duration
	}{
		{"delivered at once", []string{"Delivered"}, schedule, 1, "Delivered", 0},
		{"fails twice then delivered", []string{"Failed", "Refused", "Delivered"}, schedule, 3, "Delivered", time.Minute * 8 / 10},
		{"410 stops", []string{"Failed", "Gone"}, schedule, 2, "Gone", 0},
		{"schedule used up", []string{"Failed"}, schedule, 4, "Failed", 6 * time.Hour * 8 / 10},
		{"single attempt", []string{"Failed"}, nil, 1, "Failed", 0},
		{"subscription gone", []string{activities.Skipped}, schedule, 0, activities.Skipped, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, a := activityEnv()
			var seen []activities.HookAttempt
			env.OnActivity(a.AttemptHook, mockAny, mockAny).Return(func(_ context.Context, in activities.HookAttempt) (activities.HookAttemptResult, error) {
				seen = append(seen, in)
				o := c.outcomes[min(len(seen), len(c.outcomes))-1]
				next := time.Duration(0)
				if !in.Final {
					next = in.RetryIn
				}
				return activities.HookAttemptResult{Outcome: o, AttemptID: int64(len(seen)), NextIn: next}, nil
			})
			start := env.Now()
			env.ExecuteWorkflow(workflows.HookDelivery, workflows.HookDeliveryInput{
				Tenant: "1001", SubscriptionID: 5, Retries: c.retries,
				Event: activities.HookEvent{ID: "evt_1", Type: "alert.sent"},
			})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res workflows.HookDeliveryResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.Attempts != c.attempts || res.Outcome != c.outcome {
				t.Fatalf("result %+v", res)
			}
			for i, in := range seen {
				if in.Attempt != i+1 || in.Final != (i >= len(c.retries)) {
					t.Fatalf("attempt %d: %+v", i+1, in)
				}
			}
			if took := env.Now().Sub(start); took < c.minTime {
				t.Fatalf("took %s of workflow time, want at least %s", took, c.minTime)
			}
		})
	}
}

func TestHookDeliveryStopsOnABadSecret(t *testing.T) {
	t.Parallel()
	env, a := activityEnv()
	calls := 0
	env.OnActivity(a.AttemptHook, mockAny, mockAny).Return(func(context.Context, activities.HookAttempt) (activities.HookAttemptResult, error) {
		calls++
		return activities.HookAttemptResult{}, temporal.NewNonRetryableApplicationError("cannot open", activities.ErrTypeHookSecret, nil)
	})
	env.ExecuteWorkflow(workflows.HookDelivery, workflows.HookDeliveryInput{Tenant: "1", SubscriptionID: 1, Event: activities.HookEvent{ID: "e"}})
	if env.GetWorkflowError() == nil || calls != 1 {
		t.Fatalf("error %v after %d calls", env.GetWorkflowError(), calls)
	}
}

func TestProcessFileDoesNotRetryBadMedia(t *testing.T) {
	t.Parallel()
	env, a := activityEnv()
	calls := 0
	env.OnActivity(a.ProcessFile, mockAny, mockAny).Return(func(context.Context, activities.ProcessFileInput) (activities.ProcessFileResult, error) {
		calls++
		return activities.ProcessFileResult{}, temporal.NewNonRetryableApplicationError("too long", activities.ErrTypeAudioTooLong, nil)
	})
	env.ExecuteWorkflow(workflows.ProcessFile, activities.ProcessFileInput{Tenant: "1", ContentType: "audio/wav", Eas: true})
	var appErr *temporal.ApplicationError
	if err := env.GetWorkflowError(); err == nil || calls != 1 || !asApp(err, &appErr) || appErr.Type() != activities.ErrTypeAudioTooLong {
		t.Fatalf("error %v after %d calls", err, calls)
	}
}

// activityEnv returns a workflow test environment with the activities
// registered, and the nil *Activities to mock them through.
func activityEnv() (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var a *activities.Activities
	env.RegisterActivity(a)
	return env, a
}

var mockAny = mock.Anything

func asApp(err error, target **temporal.ApplicationError) bool { return errors.As(err, target) }

// A processing that fails removes the upload's objects; histories from
// before the change end with the failure.
func TestFailedProcessingRemovesTheUpload(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version workflow.Version
		fail    bool
		removed []string
	}{
		{1, true, []string{"1/files/u"}},
		{1, false, nil},
		{workflow.DefaultVersion, true, nil},
		{workflow.DefaultVersion, false, nil},
	} {
		env, a := activityEnv()
		env.OnGetVersion(workflows.RemoveFailedUploadChange, workflow.DefaultVersion, 1).Return(c.version)
		env.OnActivity(a.ProcessFile, mockAny, mockAny).Return(func(context.Context, activities.ProcessFileInput) (activities.ProcessFileResult, error) {
			if c.fail {
				return activities.ProcessFileResult{}, temporal.NewNonRetryableApplicationError("bad", activities.ErrTypeInvalidMedia, nil)
			}
			return activities.ProcessFileResult{}, nil
		})
		var removed []string
		env.OnActivity(a.RemoveUpload, mockAny, mockAny).Return(func(_ context.Context, prefix string) error {
			removed = append(removed, prefix)
			return nil
		})
		env.ExecuteWorkflow(workflows.ProcessFile, activities.ProcessFileInput{Tenant: "1", Prefix: "1/files/u", ContentType: "image/png"})
		if err := env.GetWorkflowError(); (err != nil) != c.fail {
			t.Fatalf("version %d, fail %v: error %v", c.version, c.fail, err)
		}
		if fmt.Sprint(removed) != fmt.Sprint(c.removed) {
			t.Fatalf("version %d, fail %v: removed %v, want %v", c.version, c.fail, removed, c.removed)
		}
	}
}
