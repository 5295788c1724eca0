package alerting_test

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// reusedKey fails t unless r refuses a key reused for another alert: a 422
// whose one failure names location and the key.
func reusedKey(t *testing.T, r stacktest.Response, location, key string) rest.ProblemDetails {
	t.Helper()
	p := problem(t, r)
	if r.Status != http.StatusUnprocessableEntity || p.Type != rest.ProblemTypeBase+"idempotency-key-reused" ||
		len(p.Errors) != 1 || p.Errors[0].Location != location || p.Errors[0].AttemptedValue != key {
		t.Fatalf("the key %s reused for another alert: %d %s, want a 422 naming %s", key, r.Status, r.Body, location)
	}
	return p
}

// TestAKeyReusedForAnotherAlertIsRefused: the same Idempotency-Key or jobId
// with a different alert is a 422 naming where the key was given, and
// nothing is stored, instead of a replay of the first alert that sends
// nothing and says it was sent. The same alert again, however its JSON is
// written and wherever its key is given, is a retry and replays.
func TestAKeyReusedForAnotherAlertIsRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	drill := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "routine drill", "body": "a"},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "drill@example.com"}}},
	}}
	shelter := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "SHELTER IN PLACE", "body": "b"},
		"priority":   map[string]any{"priority": "Emergency"},
		"channels":   map[string]any{"text": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"phone": "+14155550912"}}},
	}}
	first := send(t, s, tok, drill, "Idempotency-Key", "key-1")
	reusedKey(t, s.Do(t, http.MethodPost, "/v2/alerts", tok, shelter, "Idempotency-Key", "key-1"), "header.Idempotency-Key", "key-1")
	shelter["jobId"] = "key-1"
	reusedKey(t, s.Do(t, http.MethodPost, "/v2/alerts", tok, shelter), "body.jobId", "key-1")
	if n := alertCount(t, s, tok); n != 1 {
		t.Fatalf("%d alerts, want only the drill", n)
	}
	// The drill again, its properties in another order and its key in the
	// body: a retry.
	again := []byte(`{"jobId": "key-1", "settings": {"recipients": {"adHoc": [{"email": "drill@example.com"}]},
		"channels": {"email": {"enabled": true}}, "message": {"body": "a", "subject": "routine drill"}}}`)
	if r := send(t, s, tok, again); r.AlertID != first.AlertID || !r.Replayed {
		t.Fatalf("the drill's retry: %+v, want alert %d replayed", r, first.AlertID)
	}

	// A form's jobId keys the alert and its attachment: another file is
	// another alert.
	post := func(data string) stacktest.Response {
		t.Helper()
		buf, formType, err := attachmentForm(drill, "form-1", "plan.txt", "text/plain", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, buf, "Content-Type", formType)
	}
	if r := post("Assemble at the gate."); r.Status != http.StatusCreated {
		t.Fatalf("create with an attachment: %d %s", r.Status, r.Body)
	}
	reusedKey(t, post("Stay inside."), "body.jobId", "form-1")
	if r := post("Assemble at the gate."); r.Status != http.StatusOK {
		t.Fatalf("the retry with the same attachment: %d %s", r.Status, r.Body)
	}

	// In a bulk send, an alert whose jobId is another alert's is refused in
	// its result, and so is an alert at a place of a batch sent again with
	// its Idempotency-Key that held another alert there.
	bulk := func(body any, headers ...string) bulkResult {
		t.Helper()
		r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/alerts/bulkSend", tok, body, headers...)
		var res bulkResult
		r.JSON(t, &res)
		if r.Status != http.StatusOK || len(res.Results) != 2 {
			t.Fatalf("bulk send: %d %s", r.Status, r.Body)
		}
		return res
	}
	delete(shelter, "jobId")
	batch := bulk(map[string]any{"alerts": []any{drill, shelter}}, "Idempotency-Key", "batch-1")
	res := bulk(map[string]any{"alerts": []any{shelter, map[string]any{"jobId": "key-1", "settings": shelter["settings"]}}}, "Idempotency-Key", "batch-1")
	for i, at := range []string{"header.Idempotency-Key", "body.alerts[1].jobId"} {
		if r := res.Results[i]; r.Accepted || r.Status != http.StatusUnprocessableEntity || len(r.Errors) != 1 || r.Errors[0].Location != at {
			t.Errorf("alert %d with a key of another alert: %+v, want a 422 naming %s", i, r, at)
		}
	}
	if n := alertCount(t, s, tok); n != 4 {
		t.Fatalf("%d alerts, want 4: the drill, the form's, and the batch's two", n)
	}
	if res := bulk(map[string]any{"alerts": []any{drill, shelter}}, "Idempotency-Key", "batch-1"); res.Accepted != 2 ||
		res.Results[1].Alert.AlertID != batch.Results[1].Alert.AlertID || !res.Results[1].Alert.Replayed {
		t.Fatalf("the batch's retry: %+v, want its alerts replayed", res)
	}
}

type bulkResult struct {
	Accepted, Rejected int
	Results            []struct {
		Accepted bool
		Status   int
		Alert    *sendResponse
		Errors   []rest.ValidationFailure
	}
}

// TestBulkSendRefusesTwoAlertsWithOneKey: two alerts of one bulk send with
// the same key are never a retry of each other. The request is a 400
// naming the later one's jobId (the earlier one's when the later's key is
// the one the header gave it), and none of its alerts is stored, where the
// second was answered with the first (a routine drill for an Emergency
// text) and never sent.
func TestBulkSendRefusesTwoAlertsWithOneKey(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	path := "/v4/" + tenant + "/alerts/bulkSend"
	repro := `{"alerts":[{"jobId":"dupjob-2","settings":{"message":{"subject":"routine drill","body":"a"},"channels":{"email":{"enabled":true}},"recipients":{"adHoc":[{"email":"bulka@example.com"}]}}},` +
		`{"jobId":"dupjob-2","settings":{"message":{"subject":"SHELTER IN PLACE","body":"b"},"priority":{"priority":"Emergency"},"channels":{"text":{"enabled":true}},"recipients":{"adHoc":[{"phone":"+14155550912"}]}}}]}`
	r := s.Do(t, http.MethodPost, path, tok, []byte(repro))
	if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != "body.alerts[1].jobId" {
		t.Fatalf("two alerts with one jobId: %d %s", r.Status, r.Body)
	}
	// The same alert twice is refused as well: a client that means one
	// alert sends it once.
	same := strings.Replace(repro, `"SHELTER IN PLACE","body":"b"`, `"routine drill","body":"a"`, 1)
	if r := s.Do(t, http.MethodPost, path, tok, []byte(same)); r.Status != http.StatusBadRequest {
		t.Fatalf("one alert twice with its jobId: %d %s", r.Status, r.Body)
	}
	// A jobId written as the key the header gives another alert of the
	// batch is that alert's key.
	key := "batch-7"
	generated := fmt.Sprintf("bulk:%x/0", sha256.Sum256([]byte(key)))
	clash := `{"alerts":[{"settings":{"message":{"subject":"a","body":"a"},"channels":{"email":{"enabled":true}},"recipients":{"adHoc":[{"email":"bulka@example.com"}]}}},` +
		`{"jobId":"` + generated + `","settings":{"message":{"subject":"b","body":"b"},"channels":{"email":{"enabled":true}},"recipients":{"adHoc":[{"email":"bulka@example.com"}]}}}]}`
	r = s.Do(t, http.MethodPost, path, tok, []byte(clash), "Idempotency-Key", key)
	if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != "body.alerts[1].jobId" {
		t.Fatalf("a jobId that is the header's key of another alert: %d %s", r.Status, r.Body)
	}
	if n := alertCount(t, s, tok); n != 0 {
		t.Fatalf("%d alerts stored by refused requests", n)
	}
}

// TestBulkKeysAreReserved: the keys a bulk send makes from its
// Idempotency-Key (bulk:<digest>/<index>) are not a client's to write, so
// a single alert cannot be answered with an alert of a batch: such a key
// in a jobId or an Idempotency-Key is a 400 naming where it was given.
func TestBulkKeysAreReserved(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	alertBody := func(jobID string) string {
		job := ""
		if jobID != "" {
			job = `"jobId":"` + jobID + `",`
		}
		return `{` + job + `"settings":{"message":{"subject":"a","body":"a"},"channels":{"email":{"enabled":true}},"recipients":{"adHoc":[{"email":"bulka@example.com"}]}}}`
	}
	key := "batch-9"
	r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/alerts/bulkSend", tok, []byte(`{"alerts":[`+alertBody("")+`]}`), "Idempotency-Key", key)
	if r.Status != http.StatusOK {
		t.Fatalf("bulk send: %d %s", r.Status, r.Body)
	}
	generated := fmt.Sprintf("bulk:%x/0", sha256.Sum256([]byte(key)))
	for _, c := range []struct {
		name, path, body, header, at string
	}{
		{"a single alert's jobId", "/v2/alerts", alertBody(generated), "", "body.jobId"},
		{"a single alert's header", "/v2/alerts", alertBody(""), generated, "header.Idempotency-Key"},
		{"a bulk alert's jobId", "/v4/" + tenant + "/alerts/bulkSend", `{"alerts":[` + alertBody("bulk:mine") + `]}`, "", "body.alerts[0].jobId"},
	} {
		var extra []string
		if c.header != "" {
			extra = []string{"Idempotency-Key", c.header}
		}
		r := s.Do(t, http.MethodPost, c.path, tok, []byte(c.body), extra...)
		if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != c.at ||
			!strings.Contains(p.Errors[0].ErrorMessage, "reserved") {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	if n := alertCount(t, s, tok); n != 1 {
		t.Fatalf("%d alerts stored, want the bulk send's one", n)
	}
}
