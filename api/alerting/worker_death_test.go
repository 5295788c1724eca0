package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/tocsin/tocsin/activities"
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
	file := "externalId,firstName,lastName,emails\n"
	for i := range recipients {
		file += fmt.Sprintf("wd-%d,R%d,Last,r%d@example.com\n", i, i, i)
	}
	listed := importContacts(t, s, tenant, "worker death", file)
	if listed.Created != recipients {
		t.Fatalf("import %+v", listed)
	}

	release := s.Sandbox.SMTP.HoldAfter(taken)
	defer release()
	w := s.StartWorkerProcess(t)
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Evacuate", "body": "Leave building B now."},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"distributionListIds": []int64{listed.DistributionList.ID}},
	}})

	// The batch keeps what left in PostgreSQL within about a second; the
	// worker dies then, its SMTP session stalled on the next message.
	key := storage.BatchKey{Tenant: tenant, AlertID: res.AlertID, Channel: "email", Cycle: 1, Lo: 0, Hi: recipients}
	var kept activities.BatchProgress
	stacktest.Eventually(t, 30*time.Second, "the batch to keep the emails taken", func() bool {
		raw, err := storage.BatchProgress(context.Background(), s.DB, key)
		if err != nil {
			t.Fatal(err)
		}
		if raw == nil {
			return false
		}
		if err := json.Unmarshal(raw, &kept); err != nil {
			t.Fatal(err)
		}
		return len(kept.Sent) == taken
	})
	w.Kill()
	release()
	s.StartWorker(t, stacktest.WorkerOptions{})

	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Deliveries.Sent != recipients {
		t.Fatalf("alert %+v, want every email Sent", st)
	}
	emails := map[string]int{}
	for _, e := range s.Sandbox.SMTP.Messages() {
		for _, to := range e.To {
			emails[strings.ToLower(to)]++
		}
	}
	for i := range recipients {
		if n := emails[fmt.Sprintf("r%d@example.com", i)]; n != 1 {
			t.Errorf("r%d@example.com got %d emails, want 1 (all: %v)", i, n, emails)
		}
	}
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
	if raw, err := storage.BatchProgress(context.Background(), s.DB, key); err != nil || raw != nil {
		t.Fatalf("the batch's results are recorded and its progress is still kept: %s %v", raw, err)
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
