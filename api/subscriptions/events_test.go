package subscriptions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/workflows"
)

// keys are the sorted keys of a JSON object.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestDeliveredEventsMatchTheCatalogue sets off every event type through the
// API and the workflows (alerts with a poll answered through its link, an
// alert no one can be reached by, verifications that succeed and fail, a file
// uploaded and deleted, a test event) with one subscription to all of them,
// and compares each delivered body, and its data, key by key with the
// example getEventTypes shows.
func TestDeliveredEventsMatchTheCatalogue(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox, func(c *config.Config) {
		c.HookAllowHosts = []string{"127.0.0.1"}
		c.HookAllowHTTP = true
		c.HookRetrySchedule = []time.Duration{300 * time.Millisecond}
		c.HookDispatchInterval = 100 * time.Millisecond
		c.HookTimeout = 5 * time.Second
	})
	tenant, token := s.NewTenant(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The catalogue, as a client reads it.
	r := s.Do(t, http.MethodGet, base+"/eventTypes?pageSize=100", token, nil)
	var catalogue struct {
		Items []struct {
			Name           string
			ExamplePayload map[string]any
		}
	}
	r.JSON(t, &catalogue)
	examples := map[string]map[string]any{}
	var names []string
	for _, e := range catalogue.Items {
		examples[e.Name] = e.ExamplePayload
		names = append(names, e.Name)
	}
	if len(names) != 12 {
		t.Fatalf("catalogue: %s", r.Body)
	}
	rcv := newReceiver(t, 204)
	// subscription.test cannot be subscribed to: getSubscriptionTest sends
	// it to the subscription whatever its event types, as below.
	sub := create(t, s, token, rcv.URL, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == "subscription.test" })...)

	// alert.created, alert.queued, alert.sent, alert.completed and
	// alert.recipient.responded: a poll by text, answered through its link.
	poll := map[string]any{"settings": map[string]any{
		"type":       "Poll",
		"message":    map[string]any{"subject": "Check-in", "body": "Are you safe?"},
		"channels":   map[string]any{"text": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"firstName": "Ann", "lastName": "A", "phone": "+15553330001"}}},
		"survey": map[string]any{"questions": []map[string]any{{"text": "Are you safe?", "options": []map[string]any{
			{"text": "Yes", "severity": "None"}, {"text": "I need help", "severity": "High"},
		}}}},
	}}
	if r := s.Do(t, http.MethodPost, "/v2/alerts", token, poll); r.Status != http.StatusCreated {
		t.Fatalf("poll alert: %d %s", r.Status, r.Body)
	}
	msg, err := sb.SMS.WaitTo(ctx, "+15553330001")
	if err != nil {
		t.Fatal(err)
	}
	short := regexp.MustCompile(`/s/[0-9A-Za-z]{8}`).FindString(msg.Body)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(s.URL + short)
	if err != nil || short == "" {
		t.Fatalf("short link %q in %q: %v", short, msg.Body, err)
	}
	res.Body.Close()
	link, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Do(t, http.MethodPost, link.Path+"?optionId=2", "", nil); r.Status != 200 {
		t.Fatalf("answer: %d %s", r.Status, r.Body)
	}

	// alert.failed: a text alert to someone with an email address only.
	unreachable := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Nobody", "body": "No phone here"},
		"channels":   map[string]any{"text": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"firstName": "Bo", "email": "bo@example.com"}}},
	}}
	if r := s.Do(t, http.MethodPost, "/v2/alerts", token, unreachable); r.Status != http.StatusCreated {
		t.Fatalf("unreachable alert: %d %s", r.Status, r.Body)
	}

	// alert.cancelled: a scheduled alert cancelled before its time.
	later := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "Drill next week"},
		"channels":   map[string]any{"text": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"firstName": "Cy", "phone": "+15553330002"}}},
		"schedule":   map[string]any{"type": "Later", "sendAt": time.Now().Add(7 * 24 * time.Hour).UTC().Format(time.RFC3339)},
	}}
	var scheduled struct{ AlertID int64 }
	r = s.Do(t, http.MethodPost, "/v2/alerts", token, later)
	r.JSON(t, &scheduled)
	if r := s.Do(t, http.MethodPost, fmt.Sprintf("/v2/alerts/%d/cancel", scheduled.AlertID), token, map[string]any{"reason": "drill moved"}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}

	// verification.completed and verification.failed.
	dir := "/" + tenant + "/directory/staff"
	var user struct{ ID string }
	r = s.Do(t, http.MethodPost, dir+"/users", token, map[string]any{"name": map[string]any{"first": "Ada", "last": "Lovelace"}})
	if r.Status != 201 {
		t.Fatalf("user: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &user)
	verify := func(addr string, right bool) {
		t.Helper()
		if r := s.Do(t, http.MethodPost, dir+"/users/"+user.ID+"/contact/emails", token, map[string]any{"address": addr}); r.Status != 201 {
			t.Fatalf("email: %d %s", r.Status, r.Body)
		}
		p := dir + "/users/" + user.ID + "/contact/emails/" + url.PathEscape(addr) + "/verification"
		nonce := "nonce-" + stacktest.Suffix()
		if r := s.Do(t, http.MethodPost, p+"/nonce", token, map[string]any{"nonce": nonce}); r.Status != 201 {
			t.Fatalf("nonce: %d %s", r.Status, r.Body)
		}
		if r := s.Do(t, http.MethodPost, p+"/resend", token, map[string]any{"nonce": nonce}); r.Status != 202 {
			t.Fatalf("resend: %d %s", r.Status, r.Body)
		}
		var code string
		stacktest.Eventually(t, 60*time.Second, "the code to "+addr, func() bool {
			for _, m := range sb.SMTP.Messages() {
				if len(m.To) == 1 && m.To[0] == addr {
					code = regexp.MustCompile(`\b\d{6}\b`).FindString(m.Text)
				}
			}
			return code != ""
		})
		if right {
			if r := s.Do(t, http.MethodPost, p+"/verify", token, map[string]any{"code": code}); r.Status != 200 {
				t.Fatalf("verify: %d %s", r.Status, r.Body)
			}
			return
		}
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		for range 5 {
			if r := s.Do(t, http.MethodPost, p+"/verify", token, map[string]any{"code": wrong}); r.Status != 400 {
				t.Fatalf("wrong code: %d %s", r.Status, r.Body)
			}
		}
	}
	verify("ada@example.com", true)
	verify("ada.l@example.com", false)

	// file.uploaded and file.deleted.
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.RGBA{200, 0, 0, 255})
	var pic, form bytes.Buffer
	_ = png.Encode(&pic, img)
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("FileName", "dot.png")
	_ = mw.WriteField("ContentType", "image/png")
	_ = mw.WriteField("ContentLength", fmt.Sprint(pic.Len()))
	fw, _ := mw.CreateFormFile("HttpFile", "dot.png")
	_, _ = fw.Write(pic.Bytes())
	_ = mw.Close()
	if r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", token, &form, "Content-Type", mw.FormDataContentType()); r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, "/v4/"+tenant+"/files/dot.png", token, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}

	// subscription.test.
	if r := s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, sub.ID), token, nil); r.Status != 200 {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}

	// Every type arrives; each body has its example's keys, and so has its data.
	seen := map[string]bool{}
	stacktest.Eventually(t, 90*time.Second, "every event type", func() bool {
		for _, got := range rcv.received() {
			var ev map[string]any
			if err := json.Unmarshal(got.body, &ev); err != nil {
				t.Fatalf("body %s: %v", got.body, err)
			}
			typ, _ := ev["type"].(string)
			if seen[typ] {
				continue
			}
			seen[typ] = true
			example, ok := examples[typ]
			if !ok {
				t.Fatalf("%s is not in the catalogue", got.body)
			}
			if g, w := keys(ev), keys(example); !slices.Equal(g, w) {
				t.Errorf("%s: body keys %v, catalogue %v", typ, g, w)
			}
			data, _ := ev["data"].(map[string]any)
			wantData, _ := example["data"].(map[string]any)
			if g, w := keys(data), keys(wantData); len(w) == 0 || !slices.Equal(g, w) {
				t.Errorf("%s: data keys %v, catalogue %v\n%s", typ, g, w, got.body)
			}
		}
		return len(seen) == len(names)
	})
	if !seen["alert.failed"] || !seen["alert.recipient.responded"] {
		t.Fatalf("seen %v", seen)
	}
	// Values are of the example's kinds too, where both are set.
	for _, got := range rcv.received() {
		var ev struct {
			Type string
			Data map[string]any
		}
		_ = json.Unmarshal(got.body, &ev)
		wantData, _ := examples[ev.Type]["data"].(map[string]any)
		for k, v := range ev.Data {
			if w := wantData[k]; v != nil && w != nil && fmt.Sprintf("%T", v) != fmt.Sprintf("%T", w) {
				t.Errorf("%s: %s is %T (%v), the catalogue shows %T", ev.Type, k, v, v, w)
			}
		}
		if ev.Type == "alert.failed" && !strings.Contains(fmt.Sprint(ev.Data["reason"]), "no") {
			t.Errorf("alert.failed without its reason: %s", got.body)
		}
	}
}

// TestSubscriptionTestIsInteractiveWork: a request waits for the test
// delivery, so it is started before routine work (priority 2, as file
// processing), with its tenant as the fairness key.
func TestSubscriptionTestIsInteractiveWork(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	r := s.Do(t, http.MethodPost, base, token, map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.sent"}})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sub model.Subscription
	r.JSON(t, &sub)
	r = s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, sub.ID), token, nil)
	var a model.SubscriptionHistory
	r.JSON(t, &a)
	if r.Status != 200 || a.Outcome != "Delivered" {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	desc, err := s.Temporal.DescribeWorkflowExecution(context.Background(), workflows.HookDeliveryID(sub.ID, a.EventID), "")
	if err != nil {
		t.Fatal(err)
	}
	if p := desc.GetWorkflowExecutionInfo().GetPriority(); p.GetPriorityKey() != storage.PriorityInteractive || p.GetFairnessKey() != tenant {
		t.Errorf("the test delivery ran with priority %v", p)
	}
}
