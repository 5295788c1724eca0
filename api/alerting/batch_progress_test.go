package alerting_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestBatchProgressSweepTakesWhatNoBatchWillRead: the progress that the
// one batch of a small email alert keeps in PostgreSQL outlives an alert
// whose workflow is terminated by hand while the batch holds emails that
// left. The maintenance sweep removes it once it is a day old, and
// progress left for an alert that ended, while the batch of a live alert
// keeps its own, and sends none of the emails it records again.
func TestBatchProgressSweepTakesWhatNoBatchWillRead(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	const recipients, taken = 12, 5
	list := emailList(t, s, tenant, "batch progress", recipients)
	ctx := context.Background()
	batch := func(id int64) storage.BatchKey { return emailBatch(tenant, id, recipients) }
	kept := func(id int64) int { return keptEmails(t, s, batch(id)) }

	// An alert that ended, with progress left for its batch as versions
	// before saves stopped at the alert's end could leave it.
	w := s.StartWorkerProcess(t)
	ended := send(t, s, tok, listEmail("Ended", list))
	if st := waitDone(t, s, tok, ended.AlertID); st.Status != "Sent" {
		t.Fatalf("first alert %+v", st)
	}
	if err := storagetest.LeaveBatchProgress(ctx, s.DB, batch(ended.AlertID), []byte(`{"sent":[{"s":1}]}`)); err != nil {
		t.Fatal(err)
	}

	// An alert whose workflow is terminated by hand while its batch holds
	// the emails that left: its worker is gone too, and its progress stays.
	release := s.Sandbox.SMTP.HoldAfter(taken)
	terminated := send(t, s, tok, listEmail("Terminated", list))
	stacktest.Eventually(t, 30*time.Second, "the batch to keep the emails taken", func() bool { return kept(terminated.AlertID) == taken })
	w.Kill()
	if err := s.Temporal.TerminateWorkflow(ctx, terminated.WorkflowID, "", "terminated by hand"); err != nil {
		t.Fatal(err)
	}
	release()

	// A live alert, on a worker that keeps the maintenance schedules, whose
	// batch holds the emails that left.
	release = s.Sandbox.SMTP.HoldAfter(taken)
	defer release()
	s.StartWorker(t, stacktest.WorkerOptions{})
	live := send(t, s, tok, listEmail("Live", list))
	stacktest.Eventually(t, 30*time.Second, "the live batch to keep the emails taken", func() bool { return kept(live.AlertID) == taken })

	// A day after the terminated alert's batch last wrote, a run of the
	// sweep removes its progress and the ended alert's.
	if err := storagetest.AgeBatchProgress(ctx, s.DB, tenant, terminated.AlertID, storage.BatchProgressMaxAge+time.Minute); err != nil {
		t.Fatal(err)
	}
	if kept(terminated.AlertID) != taken || kept(ended.AlertID) != 1 {
		t.Fatal("the progress to sweep is not there before the sweep")
	}
	sweep := s.Temporal.ScheduleClient().GetHandle(ctx, dispatch.BatchProgressSweepScheduleID(s.Config.TemporalTaskQueue))
	if err := sweep.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 60*time.Second, "the sweep to remove the ended and the terminated alert's progress", func() bool {
		return kept(terminated.AlertID) == -1 && kept(ended.AlertID) == -1
	})
	// The same statement looked at the live batch's progress and kept it.
	if n := kept(live.AlertID); n != taken {
		t.Fatalf("the live batch keeps %d emails after the sweep, want %d", n, taken)
	}

	// Released, the live batch's next attempt records what had left
	// instead of sending it: every recipient gets the live alert once.
	release()
	if st := waitDone(t, s, tok, live.AlertID); st.Status != "Sent" || st.Deliveries.Sent != recipients {
		t.Fatalf("live alert %+v, want every email Sent", st)
	}
	checkOneEmailEach(t, s, "Live", recipients)
}
