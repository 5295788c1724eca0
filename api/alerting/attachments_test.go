package alerting_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

// emailAlert is an email alert to c.
func emailAlert(c *contact) map[string]any {
	return map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "Fire drill at noon."},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{c.ID}},
	}}
}

// attachmentForm is the form of createAlertWithAttachment with alert,
// jobId (when not empty) and the file name, whose part declares
// contentType, and its content type.
func attachmentForm(alert map[string]any, jobID, name, contentType string, data []byte) (*bytes.Buffer, string, error) {
	raw, err := json.Marshal(alert)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("alert", string(raw))
	if jobID != "" {
		_ = mw.WriteField("jobId", jobID)
	}
	fw, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Disposition": {`form-data; name="attachment"; filename="` + name + `"`},
		"Content-Type":        {contentType},
	})
	if err != nil {
		return nil, "", err
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	return &buf, mw.FormDataContentType(), nil
}

// postWithAttachment sends alert with jobId and a file as
// createAlertWithAttachment to the API at base. It calls no t method, so
// that a goroutine may use it.
func postWithAttachment(base, tok string, alert map[string]any, jobID, name string, data []byte) (int, []byte, error) {
	buf, formType, err := attachmentForm(alert, jobID, name, "application/octet-stream", data)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequest(http.MethodPost, base+"/v2/alertsWithAttachments", buf)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", formType)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// holdJobID begins storing an alert of tenant with jobID and leaves its
// transaction open: an alert with the same jobId that reaches the
// database waits for it to end. It returns the transaction and the alert's id.
func holdJobID(t *testing.T, s *stacktest.Stack, tenant, jobID string) (*sqlx.Tx, int64) {
	t.Helper()
	ctx := context.Background()
	id, err := storage.NextAlertID(ctx, s.DB)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.DB.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	err = storage.InsertAlert(ctx, tx, &storage.Alert{
		ID: id, TenantID: tenant, ClientKey: sql.NullString{String: jobID, Valid: true}, Type: "Default", Priority: "NonEmergency",
		Subject: "Held", Settings: json.RawMessage(`{}`), Status: storage.AlertQueued,
		WorkflowID: alert.WorkflowID(tenant, id, alert.NewTag()), CreatedAt: time.Now().UTC(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tx, id
}

// An alert whose API process is killed after its attachment reached the
// object store and before the alert was stored leaves the object, and its
// claim on it. Once the claim outlives TOCSIN_FILE_UPLOAD_MAX_LIFE, the
// worker's orphan sweep removes both; a stored alert's attachment has no
// claim, and is kept and delivered.
func TestAttachmentOfAKilledProcessIsSwept(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.StartAPI(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	ctx := context.Background()
	c := &contact{First: "Kim", Last: "Kept", Email: "kim-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	alerts := storage.TenantKey(tenant, "alerts/")

	// An alert with the killed request's jobId is being stored: the
	// request waits for it once its attachment is in the object store,
	// and its process is killed there.
	held, _ := holdJobID(t, s, tenant, "job-killed")
	api := s.StartAPIProcess(t, func(c *config.Config) { c.FileUploadMaxLife = 8 * time.Second })
	go func() {
		_, _, _ = postWithAttachment(api.URL, tok, emailAlert(c), "job-killed", "killed.txt", []byte("Never sent."))
	}()
	stacktest.Eventually(t, 30*time.Second, "the attachment stored", func() bool {
		return len(s.ObjectKeys(t, alerts)) == 1
	})
	api.Kill()
	if err := held.Rollback(); err != nil {
		t.Fatal(err)
	}
	orphan := s.UploadClaims(t, tenant)
	if keys := s.ObjectKeys(t, alerts); len(orphan) != 1 || orphan[0].Expired || orphan[0].WorkflowID != "" ||
		len(keys) != 1 || keys[0] != orphan[0].Prefix+"killed.txt" {
		t.Fatalf("the killed request left claims %+v on objects %v", orphan, keys)
	}
	prefix := orphan[0].Prefix
	if _, err := storage.GetAlertByClientKey(ctx, s.DB, tenant, "job-killed"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the killed request's alert: %v", err)
	}

	// Meanwhile an alert with an attachment is stored: the transaction
	// that stores it releases the claim on its attachment.
	status, body, err := postWithAttachment(s.URL, tok, emailAlert(c), "job-kept", "kept.txt", []byte("Assemble at the gate."))
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create: %d %s %v", status, body, err)
	}
	var kept sendResponse
	if err := json.Unmarshal(body, &kept); err != nil {
		t.Fatal(err)
	}
	keptKey := storage.AttachmentPrefix(tenant, kept.AlertID, alert.TagOf(tenant, kept.AlertID, kept.WorkflowID)) + "kept.txt"
	if cs := s.UploadClaims(t, tenant); len(cs) != 1 || cs[0].Prefix != prefix {
		t.Fatalf("claims besides the killed request's: %+v", cs)
	}

	s.StartWorker(t, stacktest.WorkerOptions{})
	stacktest.Eventually(t, 30*time.Second, "the killed request's claim to expire", func() bool {
		cs := s.UploadClaims(t, tenant)
		return len(cs) == 1 && cs[0].Expired
	})
	sweep := s.Temporal.ScheduleClient().GetHandle(ctx, dispatch.OrphanSweepScheduleID(s.Config.TemporalTaskQueue))
	if err := sweep.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 60*time.Second, "the orphaned attachment and its claim removed", func() bool {
		return len(s.ObjectKeys(t, prefix)) == 0 && len(s.UploadClaims(t, tenant)) == 0
	})
	if keys := s.ObjectKeys(t, alerts); len(keys) != 1 || keys[0] != keptKey {
		t.Fatalf("objects after the sweep: %v, want %s", keys, keptKey)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	mail, err := sb.SMTP.WaitTo(wctx, c.Email)
	if err != nil {
		t.Fatalf("no email: %v", err)
	}
	if len(mail.Attachments) != 1 || mail.Attachments[0].Name != "kept.txt" || !strings.Contains(string(mail.Attachments[0].Data), "gate") {
		t.Fatalf("attachments %+v", mail.Attachments)
	}
}

// An alert refused after its attachment was stored (another request stored
// an alert with its jobId meanwhile) removes the attachment and its claim,
// and answers the 422 of a key that is another alert's: the alert stored
// meanwhile here is another alert (as one stored before request digests
// were kept, it cannot be told to be the same).
func TestRefusedAlertRemovesItsAttachment(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Rae", Last: "Refused", Email: "rae-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	alerts := storage.TenantKey(tenant, "alerts/")

	held, first := holdJobID(t, s, tenant, "job-twice")
	type answer struct {
		status int
		body   []byte
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		status, body, err := postWithAttachment(s.URL, tok, emailAlert(c), "job-twice", "twice.txt", []byte("Only once."))
		done <- answer{status, body, err}
	}()
	stacktest.Eventually(t, 30*time.Second, "the attachment stored", func() bool {
		return len(s.ObjectKeys(t, alerts)) == 1
	})
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || a.status != http.StatusUnprocessableEntity {
		t.Fatalf("create: %d %s %v", a.status, a.body, a.err)
	}
	var p rest.ProblemDetails
	if err := json.Unmarshal(a.body, &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Location != "body.jobId" ||
		!strings.Contains(p.Errors[0].ErrorMessage, fmt.Sprintf("alert %d, stored before", first)) {
		t.Fatalf("answer %s, want a 422 naming body.jobId and alert %d", a.body, first)
	}
	if keys, cs := s.ObjectKeys(t, alerts), s.UploadClaims(t, tenant); len(keys) != 0 || len(cs) != 0 {
		t.Fatalf("the refused alert left objects %v and claims %+v", keys, cs)
	}
}

// postAttachment sends alert with the file name, whose part declares
// contentType, as createAlertWithAttachment.
func postAttachment(t *testing.T, s *stacktest.Stack, tok string, alert map[string]any, name, contentType string, data []byte) stacktest.Response {
	t.Helper()
	buf, formType, err := attachmentForm(alert, "", name, contentType, data)
	if err != nil {
		t.Fatal(err)
	}
	return s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, buf, "Content-Type", formType)
}

// expectNothingStored fails t when the tenant has an alert, an alert
// attachment in the object store or a claim on one.
func expectNothingStored(t *testing.T, s *stacktest.Stack, tenant, tok string) {
	t.Helper()
	if n, keys, cs := alertCount(t, s, tok), s.ObjectKeys(t, storage.TenantKey(tenant, "alerts/")), s.UploadClaims(t, tenant); n != 0 || len(keys) != 0 || len(cs) != 0 {
		t.Fatalf("a refused alert left %d alerts, objects %v and claims %+v", n, keys, cs)
	}
}

// The attachment uploaded with an alert counts toward the 10 MiB its
// attachments take together, with the stored files content.attachments
// names: past it, the alert is a 400 naming the part, and neither the
// attachment nor a claim on it is stored.
func TestUploadedAttachmentCountsTowardTheTotal(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Tia", Last: "Total", Email: "tia-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	uploadFile(t, s, tenant, tok, "big", "silence.wav", "audio/wav", wav(make([]byte, 6<<20)))
	alert := emailAlert(c)
	alert["settings"].(map[string]any)["content"] = map[string]any{"attachments": []string{"big/silence.wav"}}

	r := postAttachment(t, s, tok, alert, "plan.txt", "text/plain", bytes.Repeat([]byte("x"), 5<<20))
	if r.Status != http.StatusBadRequest {
		t.Fatalf("6 MiB stored and 5 MiB uploaded: %d %s", r.Status, r.Body)
	}
	expectFailure(t, problem(t, r).Errors, "body.attachment", "alert.settings.content.attachments", r.Body)
	expectNothingStored(t, s, tenant, tok)

	if r := postAttachment(t, s, tok, alert, "plan.txt", "text/plain", bytes.Repeat([]byte("x"), 3<<20)); r.Status != http.StatusCreated {
		t.Fatalf("6 MiB stored and 3 MiB uploaded: %d %s", r.Status, r.Body)
	}
}

// The content type the attachment's part declares goes into the email's
// MIME header: one that is not a media type is a 400 naming the part,
// with nothing stored, and one that is is stored in canonical form.
func TestAttachmentContentTypeIsAMediaType(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Mo", Last: "Mime", Email: "mo-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	for _, ct := range []string{`text/html\r\nX-Evil: 1`, "text/plain;\tcharset=utf-8", "html", "text/plain; charset", "text/"} {
		r := postAttachment(t, s, tok, emailAlert(c), "a.txt", ct, []byte("Hello."))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", ct, r.Status, r.Body)
		}
		expectFailure(t, problem(t, r).Errors, "body.attachment", "not a media type", r.Body)
	}
	// A media range names many types, not the file's.
	for _, ct := range []string{"*/*", "image/*", "Text/*; charset=utf-8", "*/plain"} {
		r := postAttachment(t, s, tok, emailAlert(c), "a.txt", ct, []byte("Hello."))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", ct, r.Status, r.Body)
		}
		expectFailure(t, problem(t, r).Errors, "body.attachment", "media range", r.Body)
	}
	expectNothingStored(t, s, tenant, tok)

	r := postAttachment(t, s, tok, emailAlert(c), "a.txt", "Text/Plain; Charset=UTF-8", []byte("Hello."))
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var res sendResponse
	r.JSON(t, &res)
	al, err := storage.GetAlert(context.Background(), s.DB, tenant, res.AlertID)
	if err != nil {
		t.Fatal(err)
	}
	var refs []storage.AttachmentRef
	if err := json.Unmarshal(al.Attachments, &refs); err != nil || len(refs) != 1 || refs[0].ContentType != "text/plain; charset=UTF-8" {
		t.Fatalf("attachments %s (%v)", al.Attachments, err)
	}
}

// A boolean part of the form is true or false: anything else is a 400
// naming the part, with what it allows and the value sent, where huma said
// "invalid boolean" of "an array of 1 items" (and took 1 or t for true).
func TestFormBooleanIsTrueOrFalse(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Bo", Last: "Olean", Email: "bo-" + tenant + "@example.com"}
	seed(t, s, tenant, c)
	raw, err := json.Marshal(emailAlert(c))
	if err != nil {
		t.Fatal(err)
	}
	post := func(async string) stacktest.Response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("alert", string(raw))
		_ = mw.WriteField("async", async)
		_ = mw.Close()
		return s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, buf.Bytes(), "Content-Type", mw.FormDataContentType())
	}
	for _, v := range []string{"yes", "1", "0", "t", "on", "", " true", "true ", "tRuE"} {
		r := post(v)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("async %q: %d %s", v, r.Status, r.Body)
		}
		p := problem(t, r)
		if len(p.Errors) != 1 || p.Errors[0].Location != "body.async" || p.Errors[0].ErrorMessage != "must be true or false" || p.Errors[0].AttemptedValue != v {
			t.Fatalf("async %q: %s", v, r.Body)
		}
	}
	expectNothingStored(t, s, tenant, tok)
	for _, v := range []string{"true", "False", "TRUE"} {
		if r := post(v); r.Status != http.StatusCreated {
			t.Fatalf("async %q: %d %s", v, r.Status, r.Body)
		}
	}
}
