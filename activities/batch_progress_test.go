package activities_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/worker"
)

// textBatch stores a text alert to newAlert's recipients and gives
// activities sending texts through snd and the alert's batch.
func textBatch(t *testing.T, db *storage.DB, snd channels.Sender) (*activities.Activities, activities.BatchInput) {
	t.Helper()
	tenant := stacktest.NewTenant()
	id := newAlert(t, db, tenant)
	a := &activities.Activities{DB: db, Senders: channels.Senders{channels.Text: snd}}
	return a, activities.BatchInput{AlertRef: activities.AlertRef{Tenant: tenant, AlertID: id, Tag: testTag}, Channel: "text", Cycle: 1, Lo: 0, Hi: 4, MaxAttempts: 3}
}

// runBatchWorkflow starts a stack's API and a worker of its own that
// delivers textBatch's batch through snd, and starts deliverOneBatch on it.
func runBatchWorkflow(t *testing.T, snd channels.Sender) (*stacktest.Stack, activities.BatchInput, client.WorkflowRun) {
	t.Helper()
	s := stacktest.StartAPI(t)
	a, in := textBatch(t, s.DB, snd)
	queue := "batch-progress-" + stacktest.Suffix()
	w := sdkworker.New(s.Temporal, queue, worker.SDKOptions(worker.Options{TaskQueue: queue, MaxActivities: 4}))
	w.RegisterWorkflow(deliverOneBatch)
	w.RegisterActivity(a)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	run, err := s.Temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{TaskQueue: queue, WorkflowExecutionTimeout: time.Minute}, deliverOneBatch, in)
	if err != nil {
		t.Fatal(err)
	}
	return s, in, run
}

// slowSender sends through fakeSender, reports each result, and then takes
// a while to return, as a provider whose last answer is slow.
type slowSender struct {
	fakeSender
	wait time.Duration
}

func (s *slowSender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	res, err := s.fakeSender.Send(ctx, msgs)
	for _, r := range res {
		channels.Report(ctx, r)
	}
	time.Sleep(s.wait)
	return res, err
}

func TestDeliverBatchRecordsWhatLeftInItsHeartbeat(t *testing.T) {
	t.Parallel()
	snd := &slowSender{fakeSender: fakeSender{failTemp: true}, wait: 1500 * time.Millisecond}
	a, in := textBatch(t, stacktest.DB(t), snd)

	var mu sync.Mutex
	var last activities.BatchProgress
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		if !d.HasValues() {
			return
		}
		var p activities.BatchProgress
		if err := d.Get(&p); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		last = p
		mu.Unlock()
	})
	env.RegisterActivity(a.DeliverBatch)
	if _, err := env.ExecuteActivity(a.DeliverBatch, in); err == nil {
		t.Fatal("a temporary failure did not fail the attempt")
	}
	mu.Lock()
	defer mu.Unlock()
	// Recipient 1 was sent, 2 refused, 3 failed for now (to be sent again),
	// 4 has no number: only 1 has left.
	if len(last.Sent) != 1 || last.Sent[0].Seq != 1 || last.Sent[0].ProviderMessageID != "p-+15550000001" {
		t.Fatalf("heartbeat recorded %+v", last)
	}
}

func TestDeliverBatchAfterADeadWorkerSendsOnlyWhatHadNotLeft(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	snd := &fakeSender{failTemp: true}
	a, in := textBatch(t, db, snd)
	tenant, id := in.Tenant, in.AlertID

	// The attempt whose worker died had recorded recipient 1 as sent.
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.SetHeartbeatDetails(activities.BatchProgress{Sent: []activities.SentMessage{{Seq: 1, To: activities.AddressHash("+15550000001"), ProviderMessageID: "p-earlier"}}})
	env.RegisterActivity(a.DeliverBatch)
	if _, err := env.ExecuteActivity(a.DeliverBatch, in); err == nil {
		t.Fatal("a temporary failure did not fail the attempt")
	}
	sent := snd.sent()
	if len(sent) != 2 || sent[0] != alert.DeliveryKey(tenant, id, in.Tag, "text", 1, 2) || sent[1] != alert.DeliveryKey(tenant, id, in.Tag, "text", 1, 3) {
		t.Fatalf("the retry sent %v", sent)
	}
	d := deliveries(t, db, in)
	if d[1].Status != storage.DeliverySent || d[1].ProviderMessageID != "p-earlier" || d[2].Status != storage.DeliveryFailed ||
		d[3].Status != storage.DeliveryRetrying {
		t.Fatalf("recorded %+v", d)
	}

	// The next attempt, after a temporary failure, sends that one again.
	snd.failTemp = false
	if _, err := env.ExecuteActivity(a.DeliverBatch, in); err != nil {
		t.Fatal(err)
	}
	if sent := snd.sent(); len(sent) != 1 || sent[0] != alert.DeliveryKey(tenant, id, in.Tag, "text", 1, 3) {
		t.Fatalf("the retry after a temporary failure sent %v", sent)
	}
	if d := deliveries(t, db, in); d[3].Status != storage.DeliverySent {
		t.Fatalf("recorded %+v", d)
	}
}

// dyingSender takes the first message it is given and then fails the
// whole batch without an answer for any message, leaving what a dead
// worker leaves: a message that left and no record of it, after wait.
// Later calls go to fakeSender.
type dyingSender struct {
	fakeSender
	died bool
	wait time.Duration
}

func (s *dyingSender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	if s.died {
		return s.fakeSender.Send(ctx, msgs)
	}
	s.died = true
	s.fakeSender.keys = append(s.fakeSender.keys, msgs[0].Key)
	channels.Report(ctx, channels.Result{Key: msgs[0].Key, Outcome: channels.Sent, ProviderMessageID: "p-first"})
	time.Sleep(s.wait)
	return nil, errors.New("connection reset")
}

// deliverOneBatch runs DeliverBatch as SendAlert's batches run.
func deliverOneBatch(ctx workflow.Context, in activities.BatchInput) (activities.BatchOutcome, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 3}})
	var out activities.BatchOutcome
	err := workflow.ExecuteActivity(ctx, "DeliverBatch", in).Get(ctx, &out)
	return out, err
}

func TestDeliverBatchRetriedByTemporalSendsOnlyWhatHadNotLeft(t *testing.T) {
	t.Parallel()
	// Long enough for a heartbeat with the progress to reach the server.
	retriedByTemporal(t, 2500*time.Millisecond)
}

// TestAFailedAttemptHandsOnWhatLeftSinceItsLastHeartbeat: a batch whose
// send fails right after a message left, before any heartbeat, still
// hands it to the next attempt.
func TestAFailedAttemptHandsOnWhatLeftSinceItsLastHeartbeat(t *testing.T) {
	t.Parallel()
	retriedByTemporal(t, 0)
}

// retriedByTemporal runs a batch whose first send fails (dyingSender with
// wait) and checks that Temporal's retry sent only what had not left.
func retriedByTemporal(t *testing.T, wait time.Duration) {
	t.Helper()
	snd := &dyingSender{wait: wait}
	s, in, run := runBatchWorkflow(t, snd)
	tenant, id := in.Tenant, in.AlertID
	ctx := context.Background()
	var out activities.BatchOutcome
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	sent := snd.sent()
	want := []string{alert.DeliveryKey(tenant, id, in.Tag, "text", 1, 1), alert.DeliveryKey(tenant, id, in.Tag, "text", 1, 2), alert.DeliveryKey(tenant, id, in.Tag, "text", 1, 3)}
	if len(sent) != 3 || sent[0] != want[0] || sent[1] != want[1] || sent[2] != want[2] {
		t.Fatalf("sent %v, want each of %v once", sent, want)
	}
	d := deliveries(t, s.DB, in)
	if d[1].Status != storage.DeliverySent || d[1].ProviderMessageID != "p-first" || d[3].Status != storage.DeliverySent || out.Sent != 2 {
		t.Fatalf("recorded %+v, outcome %+v", d, out)
	}
}

// holdingSender takes the first message a second and a half into the batch,
// after the batch's first heartbeat, and answers for the batch once
// released.
type holdingSender struct {
	fakeSender
	reported, release chan struct{}
}

func (s *holdingSender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	time.Sleep(1500 * time.Millisecond)
	channels.Report(ctx, channels.Result{Key: msgs[0].Key, Outcome: channels.Sent, ProviderMessageID: "p-first"})
	close(s.reported)
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.fakeSender.Send(ctx, msgs)
}

func TestTemporalHearsOfWhatLeftWithinSeconds(t *testing.T) {
	t.Parallel()
	snd := &holdingSender{reported: make(chan struct{}), release: make(chan struct{})}
	s, _, run := runBatchWorkflow(t, snd)
	codec, err := payloadcrypt.New(s.Config.PayloadKeys, s.Config.PayloadKeyID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The SDK alone holds a heartbeat back for 0.8 × the heartbeat timeout
	// (8 s) after the last one it sent (at 1 s here): 7.5 s after the
	// message left. The worker's throttle makes it 2 s at most, and 6 s
	// leaves a busy machine the rest.
	<-snd.reported
	left := time.Now()
	var p activities.BatchProgress
	for len(p.Sent) == 0 {
		if time.Since(left) > 6*time.Second {
			t.Fatal("6 s after a message left, Temporal had not heard of it")
		}
		time.Sleep(200 * time.Millisecond)
		desc, err := s.Temporal.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		for _, pa := range desc.GetPendingActivities() {
			if d := pa.GetHeartbeatDetails(); d != nil {
				if err := codec.DataConverter().FromPayloads(d, &p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if len(p.Sent) != 1 || p.Sent[0].Seq != 1 || p.Sent[0].ProviderMessageID != "p-first" {
		t.Fatalf("Temporal heard of %+v", p)
	}
	close(snd.release)
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
}
