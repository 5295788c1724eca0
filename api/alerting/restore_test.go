package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// After the database is restored from a backup taken before an alert was
// stored, Temporal still has that alert's workflow and the text provider
// its keys, and the next alert gets the same id: it is delivered all the
// same, under a workflow id and delivery keys of its own.
func TestAlertIDHandedOutAgainAfterARestoreIsDelivered(t *testing.T) {
	t.Parallel()
	before := &contact{First: "Bea", Last: "Before", Phone: "+15550102001"}
	after := &contact{First: "Abe", Last: "After", Phone: "+15550102002"}
	sb, s, tenant, tok := restoreStack(t, before, after)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	first := send(t, s, tok, textAlert("Before the restore.", map[string]any{"contactIds": []int64{before.ID}}))
	if st := waitDone(t, s, tok, first.AlertID); st.Status != "Sent" {
		t.Fatalf("first alert %+v", st)
	}
	firstText, err := sb.SMS.WaitTo(ctx, before.Phone)
	if err != nil {
		t.Fatalf("no text for the first alert: %v", err)
	}

	storagetest.RestoreAlertsBefore(t, s.DB, tenant, first.AlertID)
	second := send(t, s, tok, textAlert("After the restore.", map[string]any{"contactIds": []int64{after.ID}}))
	if second.AlertID != first.AlertID || second.WorkflowID == first.WorkflowID {
		t.Fatalf("second alert %+v, first %+v", second, first)
	}
	if st := waitDone(t, s, tok, second.AlertID); st.Status != "Sent" || st.Deliveries.Sent != 1 {
		t.Fatalf("second alert %+v", st)
	}
	msg, err := sb.SMS.WaitTo(ctx, after.Phone)
	if err != nil {
		t.Fatalf("no text for the second alert: %v", err)
	}
	if msg.Body != "After the restore." || msg.IdempotencyKey == firstText.IdempotencyKey ||
		!strings.HasPrefix(msg.IdempotencyKey, second.WorkflowID+":text:1:") {
		t.Fatalf("second text %+v, first %+v", msg, firstText)
	}
}

// The database is restored from a backup taken before a scheduled alert
// was stored, while its workflow waits for the send time, and the next
// alert gets its id. When the time comes, the earlier alert's workflow
// ends, failed with the error of type AlertIDReused, and sends nothing:
// the new alert keeps its status, history and deliveries.
func TestWorkflowOfAnAlertBeforeARestoreLeavesTheAlertThatHasItsID(t *testing.T) {
	t.Parallel()
	before := &contact{First: "Bea", Last: "Before", Phone: "+15550102031"}
	after := &contact{First: "Abe", Last: "After", Phone: "+15550102032"}
	sb, s, tenant, tok := restoreStack(t, before, after)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The restore and the new alert must come before the send time, after
	// the workflow has started: on a loaded machine that can take seconds.
	const lead = 30 * time.Second
	sendAt := time.Now().Add(lead)
	scheduled := textAlert("Scheduled before the restore.", map[string]any{"contactIds": []int64{before.ID}})
	scheduled["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": sendAt.UTC().Format(time.RFC3339Nano)}
	first := send(t, s, tok, scheduled)
	stacktest.Eventually(t, 20*time.Second, "the scheduled alert's workflow to start", func() bool {
		d, err := s.Temporal.DescribeWorkflowExecution(ctx, first.WorkflowID, "")
		return err == nil && d.WorkflowExecutionInfo.GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_RUNNING
	})

	storagetest.RestoreAlertsBefore(t, s.DB, tenant, first.AlertID)
	second := send(t, s, tok, textAlert("After the restore.", map[string]any{"contactIds": []int64{after.ID}}))
	if second.AlertID != first.AlertID || second.WorkflowID == first.WorkflowID {
		t.Fatalf("second alert %+v, first %+v", second, first)
	}
	if st := waitDone(t, s, tok, second.AlertID); st.Status != "Sent" || st.Deliveries.Sent != 1 {
		t.Fatalf("second alert %+v", st)
	}
	if time.Now().After(sendAt) {
		t.Fatal("the new alert was done only after the earlier one's send time: the machine is too slow for this test")
	}
	// Everything the API shows of the new alert, and its deliveries.
	shown := func() string {
		t.Helper()
		var out []string
		for _, path := range []string{"/v2/alerts/%d", "/v2/alerts/%d/status"} {
			r := s.Do(t, http.MethodGet, fmt.Sprintf(path, second.AlertID), tok, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", path, r.Status, r.Body)
			}
			out = append(out, string(r.Body))
		}
		return fmt.Sprintf("%s\n%+v\n%v", strings.Join(out, "\n"), deliveries(t, s, tenant, second.AlertID), events(t, s, tenant))
	}
	was := shown()

	err := s.Temporal.GetWorkflow(ctx, first.WorkflowID, "").Get(ctx, nil)
	if !activities.IsAlertIDReused(err) {
		t.Errorf("the earlier alert's workflow ended with %v", err)
	}
	if now := shown(); now != was {
		t.Errorf("the earlier alert's workflow changed the new alert:\n%s\nwas\n%s", now, was)
	}
	for _, m := range sb.SMS.Messages() {
		if m.To == before.Phone || m.Body != "After the restore." {
			t.Errorf("sent %+v", m)
		}
	}
}

// A recipient's response link of the alert stored before the restore
// answers nothing of the alert that gets its id (and recipient number)
// again: it is an unknown link, while the new alert's own link works.
func TestResponseLinkOfAnAlertBeforeARestoreIsRefused(t *testing.T) {
	t.Parallel()
	before := &contact{First: "Bea", Last: "Before", Phone: "+15550102011"}
	after := &contact{First: "Abe", Last: "After", Phone: "+15550102012"}
	sb, s, tenant, tok := restoreStack(t, before, after)
	confirm := func(c *contact) map[string]any {
		body := textAlert("Confirm, please: {{responseLink}}", map[string]any{"contactIds": []int64{c.ID}})
		body["settings"].(map[string]any)["workflow"] = map[string]any{"confirmationRequested": true}
		return body
	}

	first := send(t, s, tok, confirm(before))
	_, oldLink := responseLink(t, s, sb, before.Phone)
	waitDone(t, s, tok, first.AlertID)

	storagetest.RestoreAlertsBefore(t, s.DB, tenant, first.AlertID)
	second := send(t, s, tok, confirm(after))
	if second.AlertID != first.AlertID {
		t.Fatalf("second alert %+v, first %+v", second, first)
	}
	_, newLink := responseLink(t, s, sb, after.Phone)
	if newLink == oldLink {
		t.Fatalf("both alerts have the link %s", newLink)
	}
	if r := s.Do(t, http.MethodGet, oldLink, "", nil); r.Status != http.StatusNotFound {
		t.Fatalf("the earlier alert's page answered %d: %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPost, oldLink+"?confirm=true", "", nil); r.Status != http.StatusNotFound {
		t.Fatalf("the earlier alert's confirmation answered %d: %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPost, newLink+"?confirm=true", "", nil); r.Status != http.StatusOK {
		t.Fatalf("the new alert's confirmation answered %d: %s", r.Status, r.Body)
	}
}

// The attachment of the alert that gets its id again after a restore is
// stored under a prefix of its own: the object store still has the earlier
// alert's attachment, which it neither overwrites nor shares a prefix
// with (an orphan sweep of one never takes the other).
func TestAttachmentOfAnAlertIDHandedOutAgainHasItsOwnPrefix(t *testing.T) {
	t.Parallel()
	before := &contact{First: "Bea", Last: "Before", Email: "bea@example.com"}
	after := &contact{First: "Abe", Last: "After", Email: "abe@example.com"}
	sb, s, tenant, tok := restoreStack(t, before, after)
	post := func(c *contact, text string) sendResponse {
		t.Helper()
		status, body, err := postWithAttachment(s.URL, tok, emailAlert(c), "", "notice.txt", []byte(text))
		var res sendResponse
		if err != nil || status != http.StatusCreated || json.Unmarshal(body, &res) != nil {
			t.Fatalf("create: %d %s %v", status, body, err)
		}
		return res
	}

	first := post(before, "Before the restore.")
	waitDone(t, s, tok, first.AlertID)
	storagetest.RestoreAlertsBefore(t, s.DB, tenant, first.AlertID)
	second := post(after, "After the restore.")
	if second.AlertID != first.AlertID {
		t.Fatalf("second alert %+v, first %+v", second, first)
	}
	prefix := func(r sendResponse) string {
		return storage.AttachmentPrefix(tenant, r.AlertID, alert.TagOf(tenant, r.AlertID, r.WorkflowID))
	}
	p1, p2 := prefix(first), prefix(second)
	keys := s.ObjectKeys(t, storage.TenantKey(tenant, "alerts/"))
	if strings.HasPrefix(p1, p2) || strings.HasPrefix(p2, p1) ||
		len(keys) != 2 || !slices.Contains(keys, p1+"notice.txt") || !slices.Contains(keys, p2+"notice.txt") {
		t.Fatalf("objects %v, prefixes %s and %s", keys, p1, p2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mail, err := sb.SMTP.WaitTo(ctx, after.Email)
	if err != nil {
		t.Fatalf("no email: %v", err)
	}
	if len(mail.Attachments) != 1 || string(mail.Attachments[0].Data) != "After the restore." {
		t.Fatalf("attachments %+v", mail.Attachments)
	}
}

// The CAP messages of the alert that gets its id again after a restore
// have identifiers of their own, with the alert's tag: a CAP gateway that
// remembers the earlier alert's takes them neither for duplicates nor for
// updates of it.
func TestCapIdentifiersOfAnAlertIDHandedOutAgainAreNew(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	ada := &contact{First: "Ada", Last: "Lovelace", Phone: "+15550102021"}
	seed(t, s, tenant, ada)
	broadcast := map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Evacuate", "body": "Leave now."},
		"channels": map[string]any{
			"eas":             map[string]any{"enabled": true, "eventCode": "EVI", "sameCodes": []string{"041005"}},
			"mobileBroadcast": map[string]any{"enabled": true},
		},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}}
	// The identifiers of the documents the gateway took, one document per
	// identifier: it drops one whose identifier it has seen. The documents
	// reach it before their alert is done.
	identifiers := func() []string {
		t.Helper()
		var ids []string
		for _, d := range l.cap.Documents() {
			a, err := cap.Parse(d)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, a.Identifier)
		}
		return ids
	}

	first := send(t, s, tok, broadcast)
	waitDone(t, s, tok, first.AlertID)
	before := identifiers()
	if len(before) != 2 {
		t.Fatalf("CAP identifiers before the restore %v", before)
	}
	storagetest.RestoreAlertsBefore(t, s.DB, tenant, first.AlertID)
	second := send(t, s, tok, broadcast)
	if second.AlertID != first.AlertID {
		t.Fatalf("second alert %+v, first %+v", second, first)
	}
	waitDone(t, s, tok, second.AlertID)
	ids := identifiers()
	if len(ids) != 4 {
		t.Fatalf("the gateway took the alert after the restore as %v; before it %v", ids, before)
	}
	for _, id := range ids[2:] {
		if slices.Contains(before, id) || !strings.Contains(id, second.WorkflowID+":") {
			t.Fatalf("identifier %s after the restore; before it %v", id, before)
		}
	}
	l.checkProblems(t)
}

// restoreStack starts a stack with a sandbox of its own and a tenant with
// the contacts of a restore test: the one the alert before the restore
// reaches and the one the alert after it reaches.
func restoreStack(t *testing.T, before, after *contact) (*sandbox.Sandbox, *stacktest.Stack, string, string) {
	t.Helper()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	seed(t, s, tenant, before, after)
	return sb, s, tenant, tok
}
