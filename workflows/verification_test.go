package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
	dirstore "github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/workflows"
)

const ttl = 10 * time.Minute

func verificationEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, *activities.Activities) {
	t.Helper()
	env, a := activityEnv()
	env.SetStartWorkflowOptions(testsuiteStartOptions())
	return env, a
}

func input() workflows.VerificationInput {
	return workflows.VerificationInput{Tenant: "1001", Person: 7, Kind: dirstore.KindEmail, Address: "ada@example.com", TTL: ttl}
}

func resendAt(env *testsuite.TestWorkflowEnvironment, after time.Duration, seq int) {
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalVerificationResend, workflows.VerificationResend{Seq: seq})
	}, after)
}

func result(t *testing.T, env *testsuite.TestWorkflowEnvironment) workflows.VerificationResult {
	t.Helper()
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var r workflows.VerificationResult
	if err := env.GetWorkflowResult(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCodeExpiresWhenItsTimeSkipsPast runs a code to its expiry on skipped
// time: the expire activity runs only after the code's lifetime.
func TestCodeExpiresWhenItsTimeSkipsPast(t *testing.T) {
	t.Parallel()
	env, a := verificationEnv(t)
	start := env.Now()
	var sentAt, expiredAt time.Time
	env.OnActivity(a.SendVerificationCode, mock.Anything, mock.MatchedBy(func(c activities.VerificationCode) bool {
		return c.Seq == 1 && c.TTL == ttl && c.WorkflowID != ""
	})).Return(func(context.Context, activities.VerificationCode) (activities.CodeSent, error) {
		sentAt = env.Now()
		return activities.CodeSent{Sent: true, ExpiresAt: env.Now().Add(ttl)}, nil
	}).Once()
	env.OnActivity(a.ExpireVerification, mock.Anything, mock.MatchedBy(func(e activities.VerificationEnd) bool { return e.Seq == 1 })).
		Return(func(context.Context, activities.VerificationEnd) (string, error) {
			expiredAt = env.Now()
			return "Expired", nil
		}).Once()
	resendAt(env, 0, 1)
	env.ExecuteWorkflow(workflows.Verification, input())
	r := result(t, env)
	if r.Status != "Expired" || r.Resends != 1 {
		t.Fatalf("%+v", r)
	}
	if expiredAt.Sub(sentAt) < ttl {
		t.Fatalf("expired %s after sending; the code lives %s", expiredAt.Sub(sentAt), ttl)
	}
	if env.Now().Sub(start) < ttl+workflows.VerificationIdle {
		t.Fatalf("the run ended after %s, before its idle time", env.Now().Sub(start))
	}
	env.AssertExpectations(t)
}

func TestSettledCodeEndsWithoutExpiry(t *testing.T) {
	t.Parallel()
	env, a := verificationEnv(t)
	env.OnActivity(a.SendVerificationCode, mock.Anything, mock.Anything).Return(activities.CodeSent{Sent: true}, nil).Once()
	resendAt(env, 0, 1)
	env.RegisterDelayedCallback(func() {
		// A settle of an older resend is ignored.
		env.SignalWorkflow(workflows.SignalVerificationSettled, workflows.VerificationSettled{Seq: 0, Status: "Failed"})
		env.SignalWorkflow(workflows.SignalVerificationSettled, workflows.VerificationSettled{Seq: 1, Status: "Verified"})
	}, 2*time.Minute)
	env.ExecuteWorkflow(workflows.Verification, input())
	if r := result(t, env); r.Status != "Verified" {
		t.Fatalf("%+v", r)
	}
	env.AssertNotCalled(t, "ExpireVerification", mock.Anything, mock.Anything)
	env.AssertExpectations(t)
}

func TestResendReplacesTheLiveCode(t *testing.T) {
	t.Parallel()
	env, a := verificationEnv(t)
	var seqs []int
	env.OnActivity(a.SendVerificationCode, mock.Anything, mock.Anything).Return(func(_ context.Context, c activities.VerificationCode) (activities.CodeSent, error) {
		seqs = append(seqs, c.Seq)
		return activities.CodeSent{Sent: true}, nil
	}).Twice()
	env.OnActivity(a.ExpireVerification, mock.Anything, mock.MatchedBy(func(e activities.VerificationEnd) bool { return e.Seq == 2 })).
		Return("Expired", nil).Once()
	resendAt(env, 0, 1)
	resendAt(env, 3*time.Minute, 2)
	env.ExecuteWorkflow(workflows.Verification, input())
	if r := result(t, env); r.Status != "Expired" || r.Resends != 2 {
		t.Fatalf("%+v", r)
	}
	if len(seqs) != 2 || seqs[0] != 1 || seqs[1] != 2 {
		t.Fatalf("sent %v", seqs)
	}
	env.AssertExpectations(t)
}

// TestUndeliverableCodeFailsTheVerification: an error no retry can fix
// (non-retryable, or of a type codeOptions names) ends the code after its
// one local attempt, with no attempt as an activity.
func TestUndeliverableCodeFailsTheVerification(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		temporal.NewNonRetryableApplicationError("550 no such user", activities.ErrTypeUndeliverable, nil),
		temporal.NewApplicationError("no text provider", activities.ErrTypeNoProvider),
		temporal.NewNonRetryableApplicationError("unreadable input", "BadInput", nil),
	} {
		r, attempts := sendCode(t, 1, err)
		if r.Status != "Failed" || attempts != "[local=true attempt=1]" {
			t.Fatalf("%v: %+v after attempts %s, want Failed after the local one", err, r, attempts)
		}
	}
}

// TestACodeIsRetriedAsAnActivity: a code gets one attempt as a local
// activity, inside the workflow task; after an error a retry may fix (a
// provider down), the other attempts run as an activity, so a failing
// provider never holds the workflow task through the retries' backoff.
// The local attempt counts among the code's six; after the last the code
// is Failed.
func TestACodeIsRetriedAsAnActivity(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		failures     int
		status, want string
	}{
		{2, "Verified", "[local=true attempt=1 local=false attempt=1 local=false attempt=2]"},
		{6, "Failed", "[local=true attempt=1 local=false attempt=1 local=false attempt=2 local=false attempt=3 local=false attempt=4 local=false attempt=5]"},
	} {
		r, attempts := sendCode(t, c.failures, errTemporary)
		if r.Status != c.status || attempts != c.want {
			t.Fatalf("%d failures: %+v after attempts %s, want %s after %s", c.failures, r, attempts, c.status, c.want)
		}
	}
}

var errTemporary = errors.New("send verification code: provider answered 503 Service Unavailable")

// sendCode runs a verification of one resend whose first failures sends
// fail with err and the others succeed; a sent code is verified a minute
// after the resend, an unsent one must fail as undeliverable. It returns
// the run's result and the send's attempts, local or not. version, if
// given, is the shape's version (LocalCodeChange).
func sendCode(t *testing.T, failures int, err error, version ...workflow.Version) (workflows.VerificationResult, string) {
	t.Helper()
	env, a := verificationEnv(t)
	if len(version) > 0 {
		env.OnGetVersion(workflows.LocalCodeChange, workflow.DefaultVersion, 2).Return(version[0])
	}
	var attempts []string
	env.OnActivity(a.SendVerificationCode, mock.Anything, mock.MatchedBy(func(c activities.VerificationCode) bool { return c.Seq == 1 })).
		Return(func(ctx context.Context, _ activities.VerificationCode) (activities.CodeSent, error) {
			info := activity.GetInfo(ctx)
			attempts = append(attempts, fmt.Sprintf("local=%v attempt=%d", info.IsLocalActivity, info.Attempt))
			if len(attempts) <= failures {
				return activities.CodeSent{}, err
			}
			return activities.CodeSent{Sent: true}, nil
		})
	env.OnActivity(a.FailVerification, mock.Anything, mock.MatchedBy(func(e activities.VerificationEnd) bool {
		return e.Seq == 1 && e.Reason == "undeliverable"
	})).Return(nil).Maybe()
	resendAt(env, 0, 1)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.SignalVerificationSettled, workflows.VerificationSettled{Seq: 1, Status: "Verified"})
	}, time.Minute)
	env.ExecuteWorkflow(workflows.Verification, input())
	return result(t, env), fmt.Sprint(attempts)
}

func testsuiteStartOptions() client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: workflows.VerificationWorkflowID([]byte("test key"), "1001", 7, "ada@example.com", 1)}
}

// TestVerificationWorkflowIDHoldsNoAddress: the id is stable for one
// address, differs between addresses and keys, and holds no address.
func TestVerificationWorkflowIDHoldsNoAddress(t *testing.T) {
	key, other := []byte("key one"), []byte("key two")
	id := workflows.VerificationWorkflowID(key, "2001", 62, "lock.b6vpbrvq@example.com", 1)
	if id != workflows.VerificationWorkflowID(key, "2001", 62, "lock.b6vpbrvq@example.com", 1) {
		t.Fatal("not stable")
	}
	if !regexp.MustCompile(`^verify-2001-62-[0-9a-f]{24}$`).MatchString(id) {
		t.Fatalf("id %s", id)
	}
	for _, differ := range []string{
		workflows.VerificationWorkflowID(key, "2001", 62, "lock.b6vpbrvq@example.org", 1),
		workflows.VerificationWorkflowID(key, "2001", 63, "lock.b6vpbrvq@example.com", 1),
		workflows.VerificationWorkflowID(other, "2001", 62, "lock.b6vpbrvq@example.com", 1),
		// The address removed and added again.
		workflows.VerificationWorkflowID(key, "2001", 62, "lock.b6vpbrvq@example.com", 2),
	} {
		if differ == id {
			t.Fatalf("%s repeats for other inputs", id)
		}
	}
	if phone := workflows.VerificationWorkflowID(key, "2001", 56, "+12025554578", 1); strings.Contains(phone, "2025554578") {
		t.Fatalf("id %s holds the number", phone)
	}
}

// A code is sent as a local activity, in the workflow task that asked for
// it, and retried as an activity; histories from before the change replay
// their own shape: version 1 retried the local activity inside the
// workflow task, the default sent the code as an activity.
func TestCodeIsSentInsideTheWorkflowTask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version  workflow.Version
		failures int
		want     string
	}{
		{2, 0, "[local=true attempt=1]"},
		{2, 1, "[local=true attempt=1 local=false attempt=1]"},
		{1, 0, "[local=true attempt=1]"},
		{1, 1, "[local=true attempt=1 local=true attempt=2]"},
		{workflow.DefaultVersion, 1, "[local=false attempt=1 local=false attempt=2]"},
	} {
		r, attempts := sendCode(t, c.failures, errTemporary, c.version)
		if r.Status != "Verified" || attempts != c.want {
			t.Fatalf("version %d: %+v after attempts %s, want Verified after %s", c.version, r, attempts, c.want)
		}
	}
}

// A nonce prune takes batch after batch while either table's batch comes
// back full, and no more than its bound; with no bounds given it takes
// NonceBatch rows a batch and at most NonceBatches batches.
func TestNonceRetentionIsBounded(t *testing.T) {
	t.Parallel()
	full, part := int64(4), int64(1)
	for _, c := range []struct {
		name    string
		in      workflows.BatchBounds
		batches []dirstore.PrunedNonces // what each batch deletes; past the end, nothing
		want    dirstore.PrunedNonces
		calls   int
	}{
		{"nothing old", workflows.BatchBounds{Batch: 4, Batches: 3}, nil, dirstore.PrunedNonces{}, 1},
		{"while either table is full", workflows.BatchBounds{Batch: 4, Batches: 5},
			[]dirstore.PrunedNonces{{Nonces: full, Counts: part}, {Nonces: part, Counts: full}, {Nonces: part, Counts: part}},
			dirstore.PrunedNonces{Nonces: full + 2*part, Counts: full + 2*part}, 3},
		{"stops at its bound", workflows.BatchBounds{Batch: 4, Batches: 2},
			[]dirstore.PrunedNonces{{Nonces: full, Counts: full}, {Nonces: full, Counts: full}, {Nonces: full, Counts: full}},
			dirstore.PrunedNonces{Nonces: 2 * full, Counts: 2 * full}, 2},
		{"default bounds", workflows.BatchBounds{},
			slices.Repeat([]dirstore.PrunedNonces{{Nonces: workflows.NonceBatch, Counts: workflows.NonceBatch}}, workflows.NonceBatches+1),
			dirstore.PrunedNonces{Nonces: workflows.NonceBatch * workflows.NonceBatches, Counts: workflows.NonceBatch * workflows.NonceBatches},
			workflows.NonceBatches},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantBatch := c.in.Batch
			if wantBatch == 0 {
				wantBatch = workflows.NonceBatch
			}
			env, a := activityEnv()
			calls := 0
			env.OnActivity(a.PruneNonces, mockAny, mockAny).Return(func(_ context.Context, batch int) (dirstore.PrunedNonces, error) {
				calls++
				if batch != wantBatch {
					t.Errorf("batch of %d, want %d", batch, wantBatch)
				}
				if calls > len(c.batches) {
					return dirstore.PrunedNonces{}, nil
				}
				return c.batches[calls-1], nil
			})
			env.ExecuteWorkflow(workflows.NonceRetention, c.in)
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var got dirstore.PrunedNonces
			if err := env.GetWorkflowResult(&got); err != nil || got != c.want || calls != c.calls {
				t.Fatalf("%+v after %d batches, want %+v after %d (%v)", got, calls, c.want, c.calls, err)
			}
		})
	}
}
