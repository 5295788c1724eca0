package activities_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// keyOf is the storage key of in's batch.
func keyOf(in activities.BatchInput) storage.BatchKey {
	return storage.BatchKey{Tenant: in.Tenant, AlertID: in.AlertID, Tag: in.Tag, Channel: in.Channel, Cycle: in.Cycle, Lo: in.Lo, Hi: in.Hi}
}

// savedProgress reads what the batch kept of its progress in PostgreSQL;
// nil when nothing.
func savedProgress(t *testing.T, db *storage.DB, in activities.BatchInput) *activities.BatchProgress {
	t.Helper()
	raw, err := storage.BatchProgress(context.Background(), db, keyOf(in))
	if err != nil {
		t.Fatal(err)
	}
	if raw == nil {
		return nil
	}
	var p activities.BatchProgress
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return &p
}

// batchEnv is textBatch's batch through snd, in a database of its own, and
// an activity environment that runs its DeliverBatch.
func batchEnv(t *testing.T, snd channels.Sender) (*storage.DB, *activities.Activities, activities.BatchInput, *testsuite.TestActivityEnvironment) {
	t.Helper()
	db := stacktest.DB(t)
	a, in := textBatch(t, db, snd)
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.RegisterActivity(a.DeliverBatch)
	return db, a, in, env
}

// heldLocalBatch runs batchEnv's batch as a local activity through a
// holdingSender and returns once a message has left, with the attempt's
// outcome to come on done.
func heldLocalBatch(t *testing.T) (*storage.DB, *activities.Activities, activities.BatchInput, *holdingSender, <-chan error) {
	t.Helper()
	snd := &holdingSender{reported: make(chan struct{}), release: make(chan struct{})}
	db, a, in, env := batchEnv(t, snd)
	done := make(chan error, 1)
	go func() {
		_, err := env.ExecuteLocalActivity(a.DeliverBatch, in)
		done <- err
	}()
	<-snd.reported
	return db, a, in, snd, done
}

// noProgressLeft fails the test when the batch, whose results are
// recorded, still has its progress kept in PostgreSQL.
func noProgressLeft(t *testing.T, db *storage.DB, in activities.BatchInput) {
	t.Helper()
	if p := savedProgress(t, db, in); p != nil {
		t.Fatalf("the batch's results are recorded and its progress is still kept: %+v", p)
	}
}

// saveProgress records in PostgreSQL that an earlier attempt of the batch,
// whose worker died, had sent recipient 1's text.
func saveProgress(t *testing.T, db *storage.DB, in activities.BatchInput) {
	t.Helper()
	b, _ := json.Marshal(activities.BatchProgress{Sent: []activities.SentMessage{
		{Seq: 1, To: activities.AddressHash("+15550000001"), ProviderMessageID: "p-earlier"}}})
	if err := storage.SaveBatchProgress(context.Background(), db, keyOf(in), b); err != nil {
		t.Fatal(err)
	}
}

// TestALocalBatchAfterADeadWorkerSendsOnlyWhatHadNotLeft: the batch of a
// single-batch alert runs as a local activity, with no heartbeat details;
// what its dead worker's attempt kept in PostgreSQL is recorded, not sent
// again, and the row goes with the batch's results.
func TestALocalBatchAfterADeadWorkerSendsOnlyWhatHadNotLeft(t *testing.T) {
	t.Parallel()
	snd := &fakeSender{}
	db, a, in, env := batchEnv(t, snd)
	saveProgress(t, db, in)
	if _, err := env.ExecuteLocalActivity(a.DeliverBatch, in); err != nil {
		t.Fatal(err)
	}
	sent := snd.sent()
	if len(sent) != 2 || sent[0] != alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, "text", 1, 2) ||
		sent[1] != alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, "text", 1, 3) {
		t.Fatalf("the attempt after the dead worker sent %v", sent)
	}
	d := deliveries(t, db, in)
	if d[1].Status != storage.DeliverySent || d[1].ProviderMessageID != "p-earlier" || d[3].Status != storage.DeliverySent {
		t.Fatalf("recorded %+v", d)
	}
	noProgressLeft(t, db, in)
}

// TestTheActivityThatRetriesALocalBatchSendsOnlyWhatHadNotLeft: a local
// attempt whose send fails keeps what had left in PostgreSQL; the batch's
// next attempt, an activity with no heartbeat details yet, reads it.
func TestTheActivityThatRetriesALocalBatchSendsOnlyWhatHadNotLeft(t *testing.T) {
	t.Parallel()
	snd := &dyingSender{}
	db, a, in, env := batchEnv(t, snd)

	if _, err := env.ExecuteLocalActivity(a.DeliverBatch, in); err == nil {
		t.Fatal("a send that failed did not fail the attempt")
	}
	p := savedProgress(t, db, in)
	if p == nil || len(p.Sent) != 1 || p.Sent[0].Seq != 1 || p.Sent[0].ProviderMessageID != "p-first" {
		t.Fatalf("the failed local attempt kept %+v", p)
	}
	snd.sent()

	in.PriorAttempts = 1
	if _, err := env.ExecuteActivity(a.DeliverBatch, in); err != nil {
		t.Fatal(err)
	}
	sent := snd.sent()
	if len(sent) != 2 || sent[0] != alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, "text", 1, 2) {
		t.Fatalf("the retry sent %v", sent)
	}
	if d := deliveries(t, db, in); d[1].Status != storage.DeliverySent || d[1].ProviderMessageID != "p-first" {
		t.Fatalf("recorded %+v", d)
	}
	noProgressLeft(t, db, in)
}

// TestALocalBatchSavesWhatLeftWithinSeconds: while a local batch's
// messages leave, what left reaches PostgreSQL within about a second,
// before the send returns: what a worker that dies then leaves behind.
func TestALocalBatchSavesWhatLeftWithinSeconds(t *testing.T) {
	t.Parallel()
	db, _, in, snd, done := heldLocalBatch(t)
	left := time.Now()
	var p *activities.BatchProgress
	for p == nil {
		if time.Since(left) > 3*time.Second {
			close(snd.release)
			t.Fatal("3 s after a message left, PostgreSQL had not heard of it")
		}
		time.Sleep(100 * time.Millisecond)
		p = savedProgress(t, db, in)
	}
	if len(p.Sent) != 1 || p.Sent[0].Seq != 1 || p.Sent[0].ProviderMessageID != "p-first" {
		t.Fatalf("saved %+v", p)
	}
	close(snd.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	noProgressLeft(t, db, in)
}

// TestAnActivityBatchKeepsNothingInPostgreSQL: a batch run as an activity
// keeps its progress in its heartbeat details only, and one that is not
// the retry of a local attempt reads nothing from PostgreSQL.
func TestAnActivityBatchKeepsNothingInPostgreSQL(t *testing.T) {
	t.Parallel()
	snd := &dyingSender{}
	db, a, in, env := batchEnv(t, snd)
	if _, err := env.ExecuteActivity(a.DeliverBatch, in); err == nil {
		t.Fatal("a send that failed did not fail the attempt")
	}
	if p := savedProgress(t, db, in); p != nil {
		t.Fatalf("an activity kept %+v in PostgreSQL", p)
	}
	// Nor does it read the table: its earlier attempts' progress is in
	// its heartbeat details, and a row there is no record of theirs.
	saveProgress(t, db, in)
	snd.sent()
	if _, err := env.ExecuteActivity(a.DeliverBatch, in); err != nil {
		t.Fatal(err)
	}
	if sent := snd.sent(); len(sent) != 3 {
		t.Fatalf("an activity took PostgreSQL's record and sent %v", sent)
	}
}

// TestTheEndOfAnAlertDeletesWhatItsBatchesLeft: a batch whose workflow
// ended before it recorded its results leaves its progress behind; the
// alert's end, completed or failed, deletes it.
func TestTheEndOfAnAlertDeletesWhatItsBatchesLeft(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	a, completed := textBatch(t, db, &fakeSender{})
	_, failed := textBatch(t, db, &fakeSender{})
	saveProgress(t, db, completed)
	saveProgress(t, db, failed)
	if err := a.CompleteAlert(ctx, completed.AlertRef); err != nil {
		t.Fatal(err)
	}
	if err := a.FailAlert(ctx, activities.FailAlertInput{AlertRef: failed.AlertRef, Reason: "stopped"}); err != nil {
		t.Fatal(err)
	}
	if p := savedProgress(t, db, completed); p != nil {
		t.Fatalf("a completed alert left %+v", p)
	}
	if p := savedProgress(t, db, failed); p != nil {
		t.Fatalf("a failed alert left %+v", p)
	}
}

// TestAFailedLaterCycleEndsAnAlertAlreadySent: a workflow that fails after
// its alert became Sent (in a later cycle) leaves it Sent, with its end
// marked, alert.completed emitted once, and what its batches left
// deleted; a batch attempt that outlives it keeps nothing.
func TestAFailedLaterCycleEndsAnAlertAlreadySent(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	a, in := textBatch(t, db, &fakeSender{})
	if _, err := a.PrepareAlert(ctx, in.AlertRef); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeliverBatch(ctx, in); err != nil {
		t.Fatal(err)
	}
	if status, err := a.FinishFirstCycle(ctx, in.AlertRef); err != nil || status != storage.AlertSent {
		t.Fatalf("first cycle: %s %v", status, err)
	}
	in.Cycle = 2
	saveProgress(t, db, in)
	for range 2 { // the second time changes nothing
		if err := a.FailAlert(ctx, activities.FailAlertInput{AlertRef: in.AlertRef, Reason: "stopped"}); err != nil {
			t.Fatal(err)
		}
	}
	al, err := storage.GetAlert(ctx, db, in.Tenant, in.AlertID)
	if err != nil || al.Status != storage.AlertSent || al.CompletedAt == nil || al.Error != "" || al.FailedAt != nil {
		t.Fatalf("alert %+v %v", al, err)
	}
	evs, err := storagetest.TenantEvents(ctx, db, in.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if fmt.Sprint(types) != "[alert.sent alert.completed]" {
		t.Fatalf("events %v", types)
	}
	if p := savedProgress(t, db, in); p != nil {
		t.Fatalf("the alert left %+v", p)
	}
	saveProgress(t, db, in)
	if p := savedProgress(t, db, in); p != nil {
		t.Fatalf("an attempt that outlived the alert kept %+v", p)
	}
}

// TestALocalAttemptThatOutlivesItsAlertLeavesNothing: a local attempt
// stuck in a send past its timeout is given up by its workflow, whose
// retry records the batch, and the alert may end before that send returns.
// What the attempt then keeps of its progress finds the alert ended and
// stays out of PostgreSQL, where nothing would delete it any more.
func TestALocalAttemptThatOutlivesItsAlertLeavesNothing(t *testing.T) {
	t.Parallel()
	// Released by nothing but the attempt's timeout (the test
	// environment's 3 s).
	db, a, in, _, done := heldLocalBatch(t)
	if err := a.CompleteAlert(context.Background(), in.AlertRef); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("an attempt past its timeout did not fail")
	}
	if p := savedProgress(t, db, in); p != nil {
		t.Fatalf("the alert had ended and an attempt left %+v", p)
	}
}

// unrecordableSender sends through fakeSender, reports each result, and
// then takes away the table the batch records its results in, as a
// database that fails right after the send.
type unrecordableSender struct {
	fakeSender
	db *storage.DB
}

func (s *unrecordableSender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	res, err := s.fakeSender.Send(ctx, msgs)
	for _, r := range res {
		channels.Report(ctx, r)
	}
	if err := storagetest.TakeAwayDeliveries(ctx, s.db); err != nil {
		return nil, err
	}
	return res, err
}

// TestAnAttemptThatCannotRecordItsResultsHandsOnWhatLeft: the send went
// through, and the transaction that records its results fails; the next
// attempt learns what left from the progress the attempt kept as it
// failed, in PostgreSQL for a local activity and in its last heartbeat
// for an activity, and sends none of it again.
func TestAnAttemptThatCannotRecordItsResultsHandsOnWhatLeft(t *testing.T) {
	t.Parallel()
	for _, local := range []bool{true, false} {
		t.Run(map[bool]string{true: "local activity", false: "activity"}[local], func(t *testing.T) {
			t.Parallel()
			db := stacktest.DB(t)
			snd := &unrecordableSender{db: db}
			a, in := textBatch(t, db, snd)
			env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
			var mu sync.Mutex
			var beat activities.BatchProgress
			env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
				mu.Lock()
				defer mu.Unlock()
				if d.HasValues() {
					_ = d.Get(&beat)
				}
			})
			env.RegisterActivity(a.DeliverBatch)
			var err error
			if local {
				_, err = env.ExecuteLocalActivity(a.DeliverBatch, in)
			} else {
				_, err = env.ExecuteActivity(a.DeliverBatch, in)
			}
			if err == nil {
				t.Fatal("results that could not be recorded did not fail the attempt")
			}
			kept := &beat
			if local {
				kept = savedProgress(t, db, in)
			}
			mu.Lock()
			defer mu.Unlock()
			// Recipient 1's text and 3's left; 2's was refused.
			if kept == nil || len(kept.Sent) != 2 || kept.Sent[0].Seq != 1 || kept.Sent[1].Seq != 3 {
				t.Fatalf("the attempt handed on %+v", kept)
			}
		})
	}
}
