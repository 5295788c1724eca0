package subscriptions_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/storage/storagetest"
)

const base = "/v2/settings/subscriptions"

// receiver is a loopback hook target that answers from a script of statuses
// (the last one repeats) and keeps what it received.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	headers  map[int]http.Header
	got      []received
}

type received struct {
	path   string
	query  string
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses, headers: map[int]http.Header{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, received{path: req.URL.Path, query: req.URL.RawQuery, header: req.Header.Clone(), body: body})
		status := r.statuses[min(n, len(r.statuses)-1)]
		for k, vs := range r.headers[n] {
			w.Header()[k] = vs
		}
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func start(t *testing.T) *stacktest.Stack {
	return stacktest.Start(t, func(c *config.Config) {
		c.HookAllowHosts = []string{"127.0.0.1"}
		c.HookAllowHTTP = true
		c.HookRetrySchedule = []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
		c.HookDispatchInterval = 100 * time.Millisecond
		c.HookTimeout = 5 * time.Second
	})
}

func create(t *testing.T, s *stacktest.Stack, token, url string, types ...string) model.Subscription {
	t.Helper()
	r := s.Do(t, http.MethodPost, base, token, map[string]any{
		"url": url, "eventTypes": types, "description": "test receiver", "headers": map[string]string{"X-Api-Key": "k-1"},
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sub model.Subscription
	r.JSON(t, &sub)
	return sub
}

func emit(t *testing.T, s *stacktest.Stack, tenant, typ string, payload any) string {
	t.Helper()
	var id string
	err := s.DB.InTx(context.Background(), func(tx *sqlx.Tx) error {
		var err error
		id, err = storage.EmitEvent(context.Background(), tx, tenant, typ, payload)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// undispatched counts the tenant's events the dispatcher has not handed on.
func undispatched(t *testing.T, s *stacktest.Stack, tenant string) int {
	t.Helper()
	events, err := storagetest.TenantEvents(context.Background(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if !e.Dispatched {
			n++
		}
	}
	return n
}

func history(t *testing.T, s *stacktest.Stack, token string, id int64, query string) model.PagedSubscriptionHistoryResponse {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/history%s", base, id, query), token, nil)
	if r.Status != 200 {
		t.Fatalf("history: %d %s", r.Status, r.Body)
	}
	var h model.PagedSubscriptionHistoryResponse
	r.JSON(t, &h)
	return h
}

func TestSubscriptionCRUDAndValidation(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	_, otherToken := s.NewTenant(t)
	rcv := newReceiver(t, 200)

	sub := create(t, s, token, rcv.URL+"/hook", "file.uploaded", "alert.created")
	if !strings.HasPrefix(sub.Secret, "whsec_") || !*sub.Active || sub.ID == 0 || len(sub.EventTypes) != 2 || sub.Headers["X-Api-Key"] != "****" {
		t.Fatalf("created %+v", sub)
	}
	target, err := (&storage.HookAttempts{DB: s.DB}).Target(context.Background(), tenant, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored := target.Secret; len(stored) == 0 || strings.Contains(string(stored), strings.TrimPrefix(sub.Secret, "whsec_")) {
		t.Fatal("the secret is stored in clear")
	}
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	r := s.Do(t, http.MethodGet, path, token, nil)
	if r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}

	bad := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"metadata address", map[string]any{"url": "https://169.254.169.254/latest", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		{"private address", map[string]any{"url": "https://10.20.30.40/hook", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		{"ipv6 loopback", map[string]any{"url": "https://[::1]:9/hook", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		{"not a URL", map[string]any{"url": "hooks please", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		{"empty port", map[string]any{"url": "http://127.0.0.1:/hook", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		{"host of a dot", map[string]any{"url": "https://./hook", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		// Dialed, it is looked up as a name: every delivery would fail.
		{"IP address with a trailing dot", map[string]any{"url": "https://1.1.1.1./hook", "eventTypes": []string{"file.uploaded"}}, "body.url"},
		{"unknown event type", map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.exploded"}}, "body.eventTypes"},
		{"no event types", map[string]any{"url": rcv.URL, "eventTypes": []string{}}, "body.eventTypes"},
		{"reserved header", map[string]any{"url": rcv.URL, "eventTypes": []string{"file.uploaded"}, "headers": map[string]string{"webhook-signature": "x"}}, "body.headers"},
		{"header injection", map[string]any{"url": rcv.URL, "eventTypes": []string{"file.uploaded"}, "headers": map[string]string{"X-A": "a\r\nB: c"}}, "body.headers"},
		{"missing url", map[string]any{"eventTypes": []string{"file.uploaded"}}, "body"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, http.MethodPost, base, token, c.body)
			if r.Status != 400 || !strings.Contains(string(r.Body), `"location":"`+c.field) {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
		})
	}

	upd := s.Do(t, http.MethodPut, path, token, map[string]any{"url": rcv.URL + "/v2", "eventTypes": []string{"alert.sent"}, "active": false})
	if upd.Status != 200 {
		t.Fatalf("update: %d %s", upd.Status, upd.Body)
	}
	var got model.Subscription
	upd.JSON(t, &got)
	if *got.Active || got.URL != rcv.URL+"/****" || len(got.EventTypes) != 1 || got.Headers != nil || got.Secret != "" {
		t.Fatalf("updated %+v", got)
	}

	r = s.Do(t, http.MethodGet, base+"?sort=-createdAt&pageSize=10", token, nil)
	var page model.PagedSubscriptionResponse
	r.JSON(t, &page)
	if r.Status != 200 || page.TotalCount != 1 || len(page.Items) != 1 || page.Items[0].ID != sub.ID {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodGet, base+"?sort=secret", token, nil); r.Status != 400 {
		t.Fatalf("bad sort: %d", r.Status)
	}

	// Another tenant's token sees nothing.
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, path}, {http.MethodPut, path}, {http.MethodDelete, path},
		{http.MethodGet, path + "/history"}, {http.MethodGet, path + "/test"},
	} {
		var body any
		if c.method == http.MethodPut {
			body = map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.sent"}}
		}
		if r := s.Do(t, c.method, c.path, otherToken, body); r.Status != 404 {
			t.Errorf("%s %s by another tenant: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	r = s.Do(t, http.MethodGet, base, otherToken, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"totalCount":0`) {
		t.Fatalf("another tenant's list: %s", r.Body)
	}
	if r := s.Do(t, http.MethodGet, base, s.Token(t, tenant, "content"), nil); r.Status != 403 {
		t.Fatalf("without the tamarack scope: %d", r.Status)
	}

	if r := s.Do(t, http.MethodDelete, path, token, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, path, token, nil); r.Status != 404 {
		t.Fatalf("second delete: %d", r.Status)
	}
	if r := s.Do(t, http.MethodGet, base+"/999999999", token, nil); r.Status != 404 {
		t.Fatalf("unknown id: %d", r.Status)
	}
}

func TestEventTypes(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	r := s.Do(t, http.MethodGet, base+"/eventTypes?pageSize=100", token, nil)
	var page model.PagedEventTypeResponse
	r.JSON(t, &page)
	if r.Status != 200 || int(page.TotalCount) != len(page.Items) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	names := map[string]bool{}
	for _, e := range page.Items {
		names[string(e.Name)] = true
		if e.Description == "" || e.ExamplePayload["type"] != string(e.Name) || e.ExamplePayload["data"] == nil {
			t.Errorf("incomplete %+v", e)
		}
	}
	for _, want := range []string{"alert.created", "alert.queued", "alert.sent", "alert.completed", "alert.failed",
		"alert.recipient.responded", "verification.completed", "verification.failed", "file.uploaded", "file.deleted", "subscription.test"} {
		if !names[want] {
			t.Errorf("missing %s", want)
		}
	}
	r = s.Do(t, http.MethodGet, base+"/eventTypes?pageSize=2&page=2&sort=-name", token, nil)
	r.JSON(t, &page)
	if len(page.Items) != 2 || page.Items[0].Name <= page.Items[1].Name {
		t.Fatalf("page 2 descending: %s", r.Body)
	}
}

func TestDeliveryRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 500, 503, 200)
	rcv.headers[1] = http.Header{"Retry-After": {"1"}}
	sub := create(t, s, token, rcv.URL+"/hook", "alert.created")
	other := create(t, s, s.Token(t, stacktest.NewTenant()), rcv.URL+"/other", "alert.created")

	evt := emit(t, s, tenant, storage.EventAlertCreated, map[string]any{"alertId": 42})
	emit(t, s, tenant, storage.EventAlertSent, map[string]any{"alertId": 42}) // not subscribed

	var h model.PagedSubscriptionHistoryResponse
	stacktest.Eventually(t, 60*time.Second, "three attempts", func() bool {
		h = history(t, s, token, sub.ID, "?sort=attempt")
		return len(h.Items) == 3 && h.Items[2].Outcome == "Delivered"
	})
	for i, want := range []struct {
		outcome string
		status  int
	}{{"Failed", 500}, {"Failed", 503}, {"Delivered", 200}} {
		a := h.Items[i]
		if string(a.Outcome) != want.outcome || a.ResponseStatus != want.status || a.Attempt != i+1 || a.EventID != evt || a.EventType != "alert.created" {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
		if (want.outcome == "Failed") != (a.NextRetryAt != nil) || (want.outcome == "Failed" && a.Error == "") {
			t.Errorf("attempt %d: next retry / error %+v", i+1, a)
		}
	}
	// The 503 asked for a second; the schedule alone would wait 300ms ± 20 %.
	if wait := h.Items[1].NextRetryAt.Sub(h.Items[1].RequestedAt); wait < time.Second {
		t.Errorf("Retry-After not honoured: next retry after %s", wait)
	}

	got := rcv.received()
	if len(got) != 3 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	wh, err := standardwebhooks.NewWebhook(sub.Secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if err := wh.Verify(g.body, g.header); err != nil {
			t.Fatalf("signature: %v", err)
		}
		if g.path != "/hook" {
			t.Fatalf("another tenant's subscription received the event: %s", g.path)
		}
		if g.header.Get("webhook-id") != evt || g.header.Get("X-Api-Key") != "k-1" {
			t.Fatalf("headers %v", g.header)
		}
		if !strings.Contains(string(g.body), `"type":"alert.created"`) || !strings.Contains(string(g.body), `"alertId":42`) {
			t.Fatalf("body %s", g.body)
		}
	}
	if n := undispatched(t, s, tenant); n != 0 {
		t.Fatalf("undispatched events: %d", n)
	}
	if n := hookDeliveries(t, s, "Delivered"); n < 1 {
		t.Fatalf("tocsin_hook_deliveries_total{outcome=Delivered} = %v", n)
	}
	if n := hookDeliveries(t, s, "Failed"); n < 2 {
		t.Fatalf("tocsin_hook_deliveries_total{outcome=Failed} = %v", n)
	}
	_ = other
}

// hookDeliveries reads tocsin_hook_deliveries_total{outcome} from the worker's registry.
func hookDeliveries(t *testing.T, s *stacktest.Stack, outcome string) float64 {
	t.Helper()
	mfs, err := s.Metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "tocsin_hook_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no tocsin_hook_deliveries_total in the worker's registry")
	return 0
}

func TestGoneDisablesTheSubscription(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 410)
	sub := create(t, s, token, rcv.URL, "file.deleted")
	emit(t, s, tenant, storage.EventFileDeleted, map[string]any{"fileName": "a.png"})

	path := fmt.Sprintf("%s/%d", base, sub.ID)
	var got model.Subscription
	stacktest.Eventually(t, 60*time.Second, "the subscription disabled", func() bool {
		got = model.Subscription{}
		s.Do(t, http.MethodGet, path, token, nil).JSON(t, &got)
		return !*got.Active
	})
	if got.DisabledReason == "" || got.DisabledAt == nil {
		t.Fatalf("disabled without a reason: %+v", got)
	}
	h := history(t, s, token, sub.ID, "")
	if len(h.Items) != 1 || h.Items[0].Outcome != "Gone" || h.Items[0].ResponseStatus != 410 || h.Items[0].NextRetryAt != nil {
		t.Fatalf("history %+v", h.Items)
	}
	// Later events are not delivered to a disabled subscription.
	emit(t, s, tenant, storage.EventFileDeleted, map[string]any{"fileName": "b.png"})
	stacktest.Eventually(t, 30*time.Second, "the event dispatched", func() bool { return undispatched(t, s, tenant) == 0 })
	time.Sleep(time.Second)
	if n := len(rcv.received()); n != 1 {
		t.Fatalf("the receiver got %d requests after it answered 410", n)
	}
	// Re-enabling clears the reason.
	r := s.Do(t, http.MethodPut, path, token, map[string]any{"url": rcv.URL, "eventTypes": []string{"file.deleted"}, "active": true})
	got = model.Subscription{}
	r.JSON(t, &got)
	if r.Status != 200 || !*got.Active || got.DisabledReason != "" || got.DisabledAt != nil {
		t.Fatalf("re-enable: %s", r.Body)
	}
}

func TestSubscriptionTestSendsNow(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	rcv := newReceiver(t, 204)
	sub := create(t, s, token, rcv.URL, "alert.completed")
	// HEAD would send the event: it is not served.
	if r := s.Do(t, http.MethodHead, fmt.Sprintf("%s/%d/test", base, sub.ID), token, nil); r.Status != http.StatusMethodNotAllowed {
		t.Fatalf("HEAD test: %d", r.Status)
	}
	r := s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, sub.ID), token, nil)
	if r.Status != 200 {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	var a model.SubscriptionHistory
	r.JSON(t, &a)
	if a.Outcome != "Delivered" || a.ResponseStatus != 204 || a.EventType != "subscription.test" || a.Attempt != 1 {
		t.Fatalf("attempt %+v", a)
	}
	got := rcv.received()
	if len(got) != 1 || !strings.Contains(string(got[0].body), `"type":"subscription.test"`) {
		t.Fatalf("received %+v", got)
	}
	wh, _ := standardwebhooks.NewWebhook(sub.Secret)
	if err := wh.Verify(got[0].body, got[0].header); err != nil {
		t.Fatalf("signature: %v", err)
	}
	// A failing receiver: the answer reports the failure, without retries.
	down := newReceiver(t, 500)
	sub2 := create(t, s, token, down.URL, "alert.completed")
	r = s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, sub2.ID), token, nil)
	r.JSON(t, &a)
	if r.Status != 200 || a.Outcome != "Failed" || a.ResponseStatus != 500 || a.NextRetryAt != nil || a.Error == "" {
		t.Fatalf("failing test: %d %s", r.Status, r.Body)
	}
	if h := history(t, s, token, sub2.ID, ""); h.TotalCount != 1 {
		t.Fatalf("history of the failed test: %+v", h)
	}
}

// TestSubscriptionTestsAreLimited: each test is a request to the target,
// so a subscription is sent hooksubs.TestBurst tests at once and then one
// every hooksubs.TestInterval; one more sooner is a 429 with Retry-After
// that sends nothing. Another subscription has tests of its own, and
// another tenant's request for the subscription is a 404, not a 429.
func TestSubscriptionTestsAreLimited(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	_, otherToken := s.NewTenant(t)
	rcv := newReceiver(t, 204)
	sub := create(t, s, token, rcv.URL, "alert.completed")
	test := func(tok string, id int64) stacktest.Response {
		return s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, id), tok, nil)
	}
	for i := range hooksubs.TestBurst {
		if r := test(token, sub.ID); r.Status != http.StatusOK {
			t.Fatalf("test %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := test(token, sub.ID)
	retry, _ := strconv.Atoi(r.Header.Get("Retry-After"))
	if r.Status != http.StatusTooManyRequests || retry < 1 || retry > int(hooksubs.TestInterval.Seconds()) {
		t.Fatalf("test past the burst: %d (Retry-After %q) %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	if n := len(rcv.received()); n != hooksubs.TestBurst {
		t.Fatalf("the target got %d requests, want %d", n, hooksubs.TestBurst)
	}
	if r := test(otherToken, sub.ID); r.Status != http.StatusNotFound {
		t.Fatalf("another tenant's test: %d %s", r.Status, r.Body)
	}
	other := create(t, s, token, rcv.URL, "alert.completed")
	if r := test(token, other.ID); r.Status != http.StatusOK {
		t.Fatalf("another subscription's test: %d %s", r.Status, r.Body)
	}
}

// TestHistorySortsAttemptsWithoutAResponseLast: sorted by responseStatus,
// either way, the history lists attempts that got no answer (here a
// refused connection) after those that did.
func TestHistorySortsAttemptsWithoutAResponseLast(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	rcv := newReceiver(t, 500, 200)
	sub := create(t, s, token, rcv.URL, "alert.sent")
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	sendTest := func() model.SubscriptionHistory {
		t.Helper()
		r := s.Do(t, http.MethodGet, path+"/test", token, nil)
		if r.Status != 200 {
			t.Fatalf("test: %d %s", r.Status, r.Body)
		}
		var a model.SubscriptionHistory
		r.JSON(t, &a)
		return a
	}
	sendTest()
	sendTest()
	if r := s.Do(t, http.MethodPut, path, token, map[string]any{"url": "http://127.0.0.1:9/hook", "eventTypes": []string{"alert.sent"}}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	if a := sendTest(); a.ResponseStatus != 0 || a.Outcome != "Failed" || a.Error == "" {
		t.Fatalf("the refused attempt: %+v", a)
	}
	for sort, want := range map[string][]int{"responseStatus": {200, 500, 0}, "-responseStatus": {500, 200, 0}} {
		var got []int
		for _, a := range history(t, s, token, sub.ID, "?sort="+sort).Items {
			got = append(got, a.ResponseStatus)
		}
		if !slices.Equal(got, want) {
			t.Errorf("sorted by %s: statuses %v, want %v (0: no response)", sort, got, want)
		}
	}
}

func TestHistoryRetentionSchedule(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	sub := create(t, s, token, "http://127.0.0.1:9/hook", "alert.sent")
	ctx := context.Background()
	// Attempts cannot be aged through the API: they are recorded as the
	// dispatcher records them, with a requested time in the past.
	attempts := &storage.HookAttempts{DB: s.DB}
	for _, days := range []int{31, 29} {
		if _, err := attempts.Record(ctx, storage.HookAttempt{Tenant: tenant, SubscriptionID: sub.ID, EventID: fmt.Sprintf("evt_%d days", days),
			EventType: "alert.sent", Attempt: 1, RequestedAt: time.Now().AddDate(0, 0, -days), Outcome: "Delivered"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if h := history(t, s, token, sub.ID, ""); h.TotalCount != 1 || h.Items[0].EventID != "evt_29 days" {
		t.Fatalf("history shows more than 30 days: %+v", h.Items)
	}
	handle := s.Temporal.ScheduleClient().GetHandle(ctx, dispatch.RetentionScheduleID(s.Config.TemporalTaskQueue))
	if err := handle.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 60*time.Second, "old history purged", func() bool {
		n, err := attempts.Count(ctx, tenant, sub.ID)
		return err == nil && n == 1
	})
}

// A dispatcher that dies after starting deliveries but before marking the
// events dispatched leaves them to be dispatched again: the second start
// finds the first delivery, so the receiver still gets the event once.
func TestRedispatchDeliversOnce(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	sub := create(t, s, token, rcv.URL, "verification.completed")
	evt := emit(t, s, tenant, storage.EventVerificationDone, map[string]any{"userId": "u-1"})
	stacktest.Eventually(t, 60*time.Second, "the delivery", func() bool { return len(rcv.received()) == 1 })

	stacktest.Eventually(t, 30*time.Second, "the event dispatched", func() bool { return undispatched(t, s, tenant) == 0 })
	// No user action undoes a dispatch: the storage function for tests does.
	if err := storagetest.UndoDispatch(context.Background(), s.DB, tenant, evt); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 30*time.Second, "the event dispatched again", func() bool { return undispatched(t, s, tenant) == 0 })
	time.Sleep(time.Second)
	if n := len(rcv.received()); n != 1 {
		t.Fatalf("the receiver got the event %d times", n)
	}
	if h := history(t, s, token, sub.ID, ""); h.TotalCount != 1 {
		t.Fatalf("%d attempts", h.TotalCount)
	}
}

// TestSubscriptionTestWaitsForItsTarget: a test event's delivery that takes
// longer than the server's request timeout, within the hook timeout, is
// answered with its attempt, not a 503.
func TestSubscriptionTestWaitsForItsTarget(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t, func(c *config.Config) {
		c.HookAllowHosts = []string{"127.0.0.1"}
		c.HookAllowHTTP = true
		c.HookTimeout = 5 * time.Second
		c.HTTPRequestTimeout = time.Second
	})
	_, token := s.NewTenant(t)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Second)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(slow.Close)
	sub := create(t, s, token, slow.URL, "alert.completed")
	r := s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, sub.ID), token, nil)
	var a model.SubscriptionHistory
	if r.Status != http.StatusOK {
		t.Fatalf("test of a slow target: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &a)
	if a.Outcome != "Delivered" || a.ResponseStatus != 204 {
		t.Fatalf("attempt %+v", a)
	}
}
