package alerting_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestScheduledAlertCanBeCancelled: a scheduled alert cancelled before its
// time is never sent, its workflow ends, and the change is told once; an
// alert whose time came cannot be cancelled.
func TestScheduledAlertCanBeCancelled(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Cy", Last: "C", Phone: "+15552220011"}
	seed(t, s, tenant, c)
	later := func(body string, in time.Duration) map[string]any {
		a := textAlert(body, map[string]any{"contactIds": []int64{c.ID}})
		a["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().Add(in).UTC().Format(time.RFC3339Nano)}
		return a
	}
	// The cancel must come before the send time, after the workflow has
	// started: on a loaded machine that can take seconds.
	const lead = 30 * time.Second
	sendAt := time.Now().Add(lead)
	soon := send(t, s, tok, later("Drill, cancelled.", lead))
	cancel := func(id int64, tok string, body any) stacktest.Response {
		return s.Do(t, http.MethodPost, fmt.Sprintf("/v2/alerts/%d/cancel", id), tok, body)
	}

	// Its workflow waits on its timer (once the starter has started it).
	stacktest.Eventually(t, 30*time.Second, "the alert's workflow to start", func() bool {
		d, err := s.Temporal.DescribeWorkflowExecution(context.Background(), soon.WorkflowID, "")
		return err == nil && d.WorkflowExecutionInfo.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
	r := cancel(soon.AlertID, tok, map[string]any{"reason": "wrong campus"})
	var st struct {
		Status     string `json:"status"`
		SentStatus string `json:"sentStatus"`
		Completed  bool   `json:"completed"`
		History    []struct{ Status, Detail string }
	}
	r.JSON(t, &st)
	last := st.History[len(st.History)-1]
	if r.Status != 200 || st.Status != "Cancelled" || st.SentStatus != "Cancelled" || !st.Completed ||
		last.Status != "Cancelled" || !strings.Contains(last.Detail, "wrong campus") {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	stacktest.Eventually(t, 30*time.Second, "the alert's workflow to end cancelled", func() bool {
		d, err := s.Temporal.DescribeWorkflowExecution(context.Background(), soon.WorkflowID, "")
		return err == nil && d.WorkflowExecutionInfo.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_CANCELED
	})
	// Again: the same answer, and no second event.
	if r := cancel(soon.AlertID, tok, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"status":"Cancelled"`) {
		t.Fatalf("second cancel: %d %s", r.Status, r.Body)
	}
	// Another tenant's alert is not found; a reason is bounded.
	_, other := s.NewTenant(t)
	if p := problem(t, cancel(soon.AlertID, other, nil)); p.Status != http.StatusNotFound {
		t.Fatalf("another tenant cancels: %s", p.Error())
	}
	far := send(t, s, tok, later("Drill next month.", 30*24*time.Hour))
	if p := problem(t, cancel(far.AlertID, tok, map[string]any{"reason": strings.Repeat("x", 501)})); p.Status != 400 || !strings.Contains(p.Error(), "body.reason") {
		t.Fatalf("long reason: %s", p.Error())
	}
	if st := status(t, s, tok, far.AlertID); st.Status != "Scheduled" {
		t.Fatalf("refused cancel changed the alert: %+v", st)
	}

	// An alert whose time came cannot be cancelled.
	now := send(t, s, tok, textAlert("Drill now.", map[string]any{"contactIds": []int64{c.ID}}))
	waitDone(t, s, tok, now.AlertID)
	if p := problem(t, cancel(now.AlertID, tok, nil)); p.Status != http.StatusConflict || !strings.Contains(p.Detail, "Sent") {
		t.Fatalf("cancel a sent alert: %s", p.Error())
	}

	// The cancelled alert's time passes and nothing is sent.
	time.Sleep(time.Until(sendAt.Add(2 * time.Second)))
	for _, m := range sb.SMS.Messages() {
		if m.Body == "Drill, cancelled." {
			t.Fatal("a cancelled alert was sent")
		}
	}
	if st := status(t, s, tok, soon.AlertID); st.Status != "Cancelled" || st.Recipients != 0 {
		t.Fatalf("cancelled alert after its time: %+v", st)
	}
	if n := strings.Count(strings.Join(events(t, s, tenant), ","), "alert.cancelled"); n != 1 {
		t.Fatalf("%d alert.cancelled events, want 1", n)
	}
	// The completion filter finds it.
	found := s.Do(t, http.MethodPost, "/v2/alerts/find", tok, map[string]any{"completion": []string{"Cancelled"}})
	if found.Status != 200 || !strings.Contains(string(found.Body), fmt.Sprintf(`"id":%d,`, soon.AlertID)) || strings.Contains(string(found.Body), fmt.Sprintf(`"id":%d,`, now.AlertID)) {
		t.Fatalf("find cancelled: %d %s", found.Status, found.Body)
	}
	_ = cancel(far.AlertID, tok, nil)
}
