package alerting_test

import (
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

// TestAWorkerThatDiesInASmallAlertSendsNoEmailTwice: the one batch of a
// small email alert runs inside the workflow task; its worker process is
// killed after the SMTP server took the first messages and while it holds
// the next. The worker that takes over sends only the emails that had not
// left, and every recipient ends with one email and one result.
func TestAWorkerThatDiesInASmallAlertSendsNoEmailTwice(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	const recipients, taken = 12, 5
	list := emailList(t, s, tenant, "worker death", recipients)

	release := s.Sandbox.SMTP.HoldAfter(taken)
	defer release()
	w := s.StartWorkerProcess(t)
	res := send(t, s, tok, listEmail("Evacuate", list))

	// The batch keeps what left in PostgreSQL within about a second; the
	// worker dies then, its SMTP session stalled on the next message.
	key := emailBatch(tenant, res.AlertID, recipients)
	stacktest.Eventually(t, 30*time.Second, "the batch to keep the emails taken", func() bool { return keptEmails(t, s, key) == taken })
	w.Kill()
	release()
	s.StartWorker(t, stacktest.WorkerOptions{})

	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Deliveries.Sent != recipients {
		t.Fatalf("alert %+v, want every email Sent", st)
	}
	checkOneEmailEach(t, s, "Evacuate", recipients)
	ds := deliveries(t, s, tenant, res.AlertID)
	seqs := map[int64]bool{}
	for _, d := range ds {
		if d.Channel != "email" || d.Status != storage.DeliverySent || seqs[d.Seq] {
			t.Errorf("delivery %+v", d)
		}
		seqs[d.Seq] = true
	}
	if len(seqs) != recipients {
		t.Fatalf("%d deliveries of %d recipients: %+v", len(ds), recipients, ds)
	}
	if n := keptEmails(t, s, key); n != -1 {
		t.Fatalf("the batch's results are recorded and its progress still keeps %d emails", n)
	}
	// The batch ran as a local activity both times: no DeliverBatch
	// activity was scheduled.
	for _, e := range s.History(t, res.WorkflowID) {
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
			e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "DeliverBatch" {
			t.Fatalf("the batch ran as an activity: %v", e)
		}
	}
}
