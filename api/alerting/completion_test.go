package alerting_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/workflows"
)

// TestAlertWhoseLaterCycleFailedShowsItsEnd: an alert whose first cycle
// succeeded stays Sent when its workflow fails in a later cycle, and
// shows when it ended: completedAt, completed, and one alert.completed.
func TestAlertWhoseLaterCycleFailedShowsItsEnd(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Cy", Last: "Cycle", Phone: "+15550102041"}
	seed(t, s, tenant, c)
	ctx := context.Background()

	body := textAlert("Confirm, please.", map[string]any{"contactIds": []int64{c.ID}})
	body["settings"].(map[string]any)["workflow"] = map[string]any{"confirmationRequested": true, "cycles": 2, "cycleIntervalMinutes": 5}
	res := send(t, s, tok, body)
	stacktest.Eventually(t, 60*time.Second, "the first cycle to end", func() bool { return status(t, s, tok, res.AlertID).Status == "Sent" })
	if st := status(t, s, tok, res.AlertID); st.Completed {
		t.Fatalf("the alert completed before its second cycle: %+v", st)
	}

	// Its second cycle fails: the workflow ends, and FailAlert is its
	// last step.
	if err := s.Temporal.TerminateWorkflow(ctx, res.WorkflowID, "", "the second cycle failed"); err != nil {
		t.Fatal(err)
	}
	a := &activities.Activities{DB: s.DB}
	ref := activities.AlertRef{Tenant: tenant, AlertID: res.AlertID, Tag: alert.TagOf(tenant, res.AlertID, res.WorkflowID)}
	if err := a.FailAlert(ctx, activities.FailAlertInput{AlertRef: ref, Reason: workflows.FailedReason}); err != nil {
		t.Fatal(err)
	}

	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/status", res.AlertID), tok, nil)
	var st struct {
		Status      string     `json:"status"`
		Completed   bool       `json:"completed"`
		Error       string     `json:"error"`
		SentAt      *time.Time `json:"sentAt"`
		CompletedAt *time.Time `json:"completedAt"`
	}
	r.JSON(t, &st)
	if r.Status != http.StatusOK || st.Status != "Sent" || !st.Completed || st.Error != "" ||
		st.CompletedAt == nil || st.SentAt == nil || st.CompletedAt.Before(*st.SentAt) {
		t.Fatalf("getAlertsByIdStatus: %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts/find", tok, map[string]any{})
	var page struct {
		Items []struct {
			ID          int64      `json:"id"`
			Status      string     `json:"status"`
			CompletedAt *time.Time `json:"completedAt"`
		} `json:"items"`
	}
	r.JSON(t, &page)
	if r.Status != http.StatusOK || len(page.Items) != 1 || page.Items[0].ID != res.AlertID || page.Items[0].Status != "Sent" ||
		page.Items[0].CompletedAt == nil || !page.Items[0].CompletedAt.Equal(*st.CompletedAt) {
		t.Fatalf("findAlerts: %d %s", r.Status, r.Body)
	}
	evs := strings.Join(events(t, s, tenant), ",")
	if strings.Count(evs, "alert.completed") != 1 || strings.Contains(evs, "alert.failed") {
		t.Fatalf("events %s", evs)
	}
}
