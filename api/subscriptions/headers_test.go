package subscriptions_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/storage/storagetest"
)

const bearer = "Bearer supersecrettoken123"

// failure returns the only validation failure of a 400 answer.
func failure(t *testing.T, r stacktest.Response) rest.ValidationFailure {
	t.Helper()
	var p rest.ProblemDetails
	r.JSON(t, &p)
	if r.Status != http.StatusBadRequest || len(p.Errors) != 1 {
		t.Fatalf("want a 400 with one failure: %d %s", r.Status, r.Body)
	}
	return p.Errors[0]
}

// sendTest runs getSubscriptionTest and returns the headers the receiver got.
func sendTest(t *testing.T, s *stacktest.Stack, token string, id int64, rcv *receiver) http.Header {
	t.Helper()
	before := len(rcv.received())
	r := s.Do(t, http.MethodGet, fmt.Sprintf("%s/%d/test", base, id), token, nil)
	var a model.SubscriptionHistory
	r.JSON(t, &a)
	if r.Status != 200 || a.Outcome != "Delivered" {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	got := rcv.received()
	if len(got) != before+1 {
		t.Fatalf("the receiver got %d requests, want %d", len(got), before+1)
	}
	return got[len(got)-1].header
}

// Custom header values are credentials: stored sealed, answered masked, kept
// when the masked value comes back, and sent in full.
func TestHeaderValuesAreSealedMaskedAndDelivered(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)

	r := s.Do(t, http.MethodPost, base, token, map[string]any{
		"url": rcv.URL, "eventTypes": []string{"alert.sent"}, "headers": map[string]string{"Authorization": bearer, "X-Team": "ops"},
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sub model.Subscription
	r.JSON(t, &sub)
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	masked := map[string]string{"Authorization": "****n123", "X-Team": "****"}
	for what, resp := range map[string]stacktest.Response{
		"create": r, "get": s.Do(t, http.MethodGet, path, token, nil), "list": s.Do(t, http.MethodGet, base, token, nil),
	} {
		if resp.Status/100 != 2 || strings.Contains(string(resp.Body), "supersecrettoken") || strings.Contains(string(resp.Body), `"ops"`) {
			t.Fatalf("%s answers a header value: %d %s", what, resp.Status, resp.Body)
		}
		if !strings.Contains(string(resp.Body), `"headers":{"Authorization":"****n123","X-Team":"****"}`) {
			t.Fatalf("%s does not answer the masked headers: %s", what, resp.Body)
		}
	}
	// At rest: sealed, nothing in plain text.
	stored, err := hooksubs.New(s.DB).Get(context.Background(), tenant, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.PlainHeaders) != "{}" || len(stored.HeadersSealed) == 0 || strings.Contains(string(stored.HeadersSealed), "supersecrettoken") {
		t.Fatalf("stored headers: plain %s, sealed %q", stored.PlainHeaders, stored.HeadersSealed)
	}
	// Deliveries carry the real values.
	h := sendTest(t, s, token, sub.ID, rcv)
	if h.Get("Authorization") != bearer || h.Get("X-Team") != "ops" {
		t.Fatalf("delivered headers %v", h)
	}

	// What GET answered, sent back with one value changed, keeps the rest;
	// a masked value keeps its header's value whatever the case of the name.
	var got model.Subscription
	s.Do(t, http.MethodGet, path, token, nil).JSON(t, &got)
	if fmt.Sprint(got.Headers) != fmt.Sprint(masked) {
		t.Fatalf("get: %v", got.Headers)
	}
	up := s.Do(t, http.MethodPut, path, token, map[string]any{
		"url": got.URL, "eventTypes": got.EventTypes, "headers": map[string]string{"authorization": "****n123", "X-Team": "dev"},
	})
	if up.Status != 200 || strings.Contains(string(up.Body), "supersecrettoken") || !strings.Contains(string(up.Body), `"headers":{"X-Team":"****","authorization":"****n123"}`) {
		t.Fatalf("update: %d %s", up.Status, up.Body)
	}
	h = sendTest(t, s, token, sub.ID, rcv)
	if h.Get("Authorization") != bearer || h.Get("X-Team") != "dev" {
		t.Fatalf("delivered headers after the update %v", h)
	}

	// A masked value that matches nothing stored is refused, naming the
	// header; so is any masked value on creation.
	for _, c := range []struct {
		method, path string
		headers      map[string]string
		field        string
	}{
		{http.MethodPut, path, map[string]string{"Authorization": "****zzzz"}, "body.headers.Authorization"},
		{http.MethodPut, path, map[string]string{"X-Other": "****n123"}, "body.headers.X-Other"},
		{http.MethodPost, base, map[string]string{"Authorization": "****n123"}, "body.headers.Authorization"},
	} {
		f := failure(t, s.Do(t, c.method, c.path, token, map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.sent"}, "headers": c.headers}))
		if f.Location != c.field || !strings.Contains(f.ErrorMessage, "masked") {
			t.Errorf("%s %v: %+v", c.method, c.headers, f)
		}
	}
	h = sendTest(t, s, token, sub.ID, rcv)
	if h.Get("Authorization") != bearer {
		t.Fatalf("a refused update changed the headers: %v", h)
	}

	// Leaving the headers out removes them.
	if r := s.Do(t, http.MethodPut, path, token, map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.sent"}}); r.Status != 200 || strings.Contains(string(r.Body), `"headers"`) {
		t.Fatalf("update without headers: %d %s", r.Status, r.Body)
	}
	if h := sendTest(t, s, token, sub.ID, rcv); h.Get("Authorization") != "" || h.Get("X-Team") != "" {
		t.Fatalf("removed headers still delivered: %v", h)
	}
	if stored, _ := hooksubs.New(s.DB).Get(context.Background(), tenant, sub.ID); stored.HeadersSealed != nil {
		t.Fatalf("sealed headers kept after their removal: %q", stored.HeadersSealed)
	}
}

// Subscriptions stored before header values were sealed keep working and
// are answered masked; the worker seals them.
func TestPlainHeadersOfEarlierVersionsAreSealed(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	sub := create(t, s, token, rcv.URL, "alert.sent")
	ctx := context.Background()
	if err := storagetest.PlainHookHeaders(ctx, s.DB, tenant, sub.ID, `{"Authorization": "`+bearer+`"}`); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	check := func(when string) {
		t.Helper()
		r := s.Do(t, http.MethodGet, path, token, nil)
		if r.Status != 200 || strings.Contains(string(r.Body), "supersecrettoken") || !strings.Contains(string(r.Body), `"headers":{"Authorization":"****n123"}`) {
			t.Fatalf("%s: get %d %s", when, r.Status, r.Body)
		}
		if h := sendTest(t, s, token, sub.ID, rcv); h.Get("Authorization") != bearer {
			t.Fatalf("%s: delivered %v", when, h)
		}
	}
	check("plain")
	s.App.SealHookHeaders(ctx)
	stored, err := hooksubs.New(s.DB).Get(ctx, tenant, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.PlainHeaders) != "{}" || len(stored.HeadersSealed) == 0 || strings.Contains(string(stored.HeadersSealed), "supersecrettoken") {
		t.Fatalf("after sealing: plain %s, sealed %q", stored.PlainHeaders, stored.HeadersSealed)
	}
	check("sealed")
}

// Requests whose meaning would be undefined or silently dropped are refused,
// naming the field.
func TestSubscriptionRequestsThatCannotMeanWhatTheySay(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	sub := create(t, s, token, rcv.URL, "alert.sent")
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.sent"}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	for _, c := range []struct {
		name  string
		extra map[string]any
		field string
		says  string
	}{
		{"one header in two cases", map[string]any{"headers": map[string]string{"X-A": "1", "x-a": "2"}}, "body.headers.x-a", "X-A and x-a: header names are case-insensitive"},
		{"a header name with a Kelvin sign", map[string]any{"headers": map[string]string{"X-Api-\u212aey": "1", "x-api-key": "2"}}, "body.headers.X-Api-\u212aey", "not a valid header name"},
		{"a signing secret", map[string]any{"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "body.secret", "generated by tocsin"},
		{"subscription.test", map[string]any{"eventTypes": []string{"alert.sent", "subscription.test"}}, "body.eventTypes[1]", `expected value to be one of "alert.cancelled, alert.completed,`},
	} {
		for _, m := range []struct{ method, path string }{{http.MethodPost, base}, {http.MethodPut, path}} {
			t.Run(c.name+" "+m.method, func(t *testing.T) {
				f := failure(t, s.Do(t, m.method, m.path, token, body(c.extra)))
				if f.Location != c.field || !strings.Contains(f.ErrorMessage, c.says) {
					t.Fatalf("%+v", f)
				}
				if strings.Contains(fmt.Sprint(f.AttemptedValue), "whsec_") {
					t.Fatalf("the secret is echoed: %+v", f)
				}
			})
		}
	}
	// Every refused header is named, in the order of the names.
	r := s.Do(t, http.MethodPost, base, token, body(map[string]any{"headers": map[string]string{"TE": "x", "Expect": "y", "X-Fine": "z", "Content-Length": "1"}}))
	var p rest.ProblemDetails
	r.JSON(t, &p)
	var named []string
	for _, f := range p.Errors {
		named = append(named, f.Location)
	}
	if r.Status != http.StatusBadRequest || strings.Join(named, " ") != "body.headers.Content-Length body.headers.Expect body.headers.TE" {
		t.Errorf("three reserved headers: %d %v", r.Status, named)
	}
	// Nothing changed: the signing secret is still the generated one.
	var page model.PagedSubscriptionResponse
	s.Do(t, http.MethodGet, base, token, nil).JSON(t, &page)
	if page.TotalCount != 1 {
		t.Fatalf("%d subscriptions", page.TotalCount)
	}
	wh, err := standardwebhooks.NewWebhook(sub.Secret)
	if err != nil {
		t.Fatal(err)
	}
	sendTest(t, s, token, sub.ID, rcv)
	got := rcv.received()
	if err := wh.Verify(got[len(got)-1].body, got[len(got)-1].header); err != nil {
		t.Fatalf("signature: %v", err)
	}
}

// A refused target does not say what its host resolves to, nor whether it
// resolves: a tenant would learn the addresses of internal names, or
// which internal names exist. A name that does not resolve and one that
// resolves to an internal address get one refusal, which still tells a
// typo.
func TestRefusedTargetDoesNotTellTheAddress(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	_, token := s.NewTenant(t)
	refusal := func(host string) rest.ValidationFailure {
		t.Helper()
		f := failure(t, s.Do(t, http.MethodPost, base, token, map[string]any{"url": "https://" + host + "/hook", "eventTypes": []string{"alert.sent"}}))
		if f.Location != "body.url" || strings.Contains(f.ErrorMessage, "127.0.") || strings.Contains(f.ErrorMessage, "::1") {
			t.Fatalf("%s: %+v", host, f)
		}
		return f
	}
	if f := refusal("localhost"); !strings.Contains(f.ErrorMessage, "localhost is not allowed") {
		t.Fatalf("%+v", f)
	}
	t.Run("names", func(t *testing.T) {
		internal, missing := stacktest.InternalName(t), "no-such-host.invalid"
		a, b := refusal(internal).ErrorMessage, refusal(missing).ErrorMessage
		if strings.ReplaceAll(a, internal, "H") != strings.ReplaceAll(b, missing, "H") || !strings.Contains(b, "typo") {
			t.Fatalf("an internal name is refused with %q, a name that does not resolve with %q", a, b)
		}
	})
}

// createWith creates a subscription to rcv with the headers h.
func createWith(t *testing.T, s *stacktest.Stack, token string, rcv *receiver, h map[string]string) model.Subscription {
	t.Helper()
	r := s.Do(t, http.MethodPost, base, token, map[string]any{"url": rcv.URL, "eventTypes": []string{"alert.sent"}, "headers": h})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var sub model.Subscription
	r.JSON(t, &sub)
	return sub
}

// A subscription whose headers cannot be decrypted (another
// TOCSIN_SECRETS_KEY, a damaged row) is answered marked unreadable without
// hiding the others, its deliveries fail without being sent and say why in
// its history, and sending the headers again in full repairs it.
func TestUnreadableHeadersAreAnsweredAndRepairable(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	broken := createWith(t, s, token, rcv, map[string]string{"Authorization": bearer})
	fine := createWith(t, s, token, rcv, map[string]string{"X-Team": "ops"})
	ctx := context.Background()
	if err := storagetest.DamageHookHeaders(ctx, s.DB, tenant, broken.ID, []byte("\x01sealed under another key, or damaged")); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("%s/%d", base, broken.ID)

	var page model.PagedSubscriptionResponse
	if r := s.Do(t, http.MethodGet, base, token, nil); r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	} else {
		r.JSON(t, &page)
	}
	got := map[int64]model.Subscription{}
	for _, it := range page.Items {
		got[it.ID] = it
	}
	if b := got[broken.ID]; !b.HeadersUnreadable || b.Headers != nil {
		t.Fatalf("list, the damaged one: %+v", b)
	}
	if f := got[fine.ID]; f.HeadersUnreadable || f.Headers["X-Team"] != "****" {
		t.Fatalf("list, the other one: %+v", f)
	}
	r := s.Do(t, http.MethodGet, path, token, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"headersUnreadable":true`) || strings.Contains(string(r.Body), `"headers"`) {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}

	// A delivery fails without being sent, and the history says why.
	r = s.Do(t, http.MethodGet, path+"/test", token, nil)
	var a model.SubscriptionHistory
	r.JSON(t, &a)
	if r.Status != 200 || a.Outcome != "Failed" || a.Error != activities.UnreadableHeaders || a.ResponseStatus != 0 {
		t.Fatalf("test: %d %s", r.Status, r.Body)
	}
	if n := len(rcv.received()); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
	if h := history(t, s, token, broken.ID, ""); len(h.Items) != 1 || h.Items[0].Error != activities.UnreadableHeaders {
		t.Fatalf("history %+v", h.Items)
	}

	// A masked value cannot be kept: there is nothing to keep it from.
	f := failure(t, s.Do(t, http.MethodPut, path, token, map[string]any{
		"url": rcv.URL, "eventTypes": []string{"alert.sent"}, "headers": map[string]string{"Authorization": "****n123", "X-New": "1"},
	}))
	if f.Location != "body.headers.Authorization" || !strings.Contains(f.ErrorMessage, "cannot be read") {
		t.Fatalf("masked value over unreadable headers: %+v", f)
	}
	// Values sent in full repair it.
	r = s.Do(t, http.MethodPut, path, token, map[string]any{
		"url": rcv.URL, "eventTypes": []string{"alert.sent"}, "headers": map[string]string{"Authorization": "Bearer fresh-token-456"},
	})
	if r.Status != 200 || strings.Contains(string(r.Body), "headersUnreadable") || !strings.Contains(string(r.Body), `"headers":{"Authorization":"****-456"}`) {
		t.Fatalf("repair: %d %s", r.Status, r.Body)
	}
	if h := sendTest(t, s, token, broken.ID, rcv); h.Get("Authorization") != "Bearer fresh-token-456" {
		t.Fatalf("delivered after the repair %v", h)
	}
}

// Header values are visible ASCII, spaces and tabs; a value stored before
// that rule with other characters is masked by whole characters, so what
// GET answers can be sent back to keep it.
func TestNonASCIIHeaderValues(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	for _, m := range []string{http.MethodPost, http.MethodPut} {
		path := base
		if m == http.MethodPut {
			path = fmt.Sprintf("%s/%d", base, createWith(t, s, token, rcv, nil).ID)
		}
		f := failure(t, s.Do(t, m, path, token, map[string]any{
			"url": rcv.URL, "eventTypes": []string{"alert.sent"}, "headers": map[string]string{"X-Key": "schlüssel-geheimnis-ä€"},
		}))
		if f.Location != "body.headers.X-Key" || !strings.Contains(f.ErrorMessage, "visible ASCII") {
			t.Fatalf("%s: %+v", m, f)
		}
	}

	legacy := createWith(t, s, token, rcv, nil)
	ctx := context.Background()
	const value = "schlüssel-geheimnis-ä€"
	if err := storagetest.PlainHookHeaders(ctx, s.DB, tenant, legacy.ID, `{"X-Key": "`+value+`"}`); err != nil {
		t.Fatal(err)
	}
	s.App.SealHookHeaders(ctx)
	path := fmt.Sprintf("%s/%d", base, legacy.ID)
	var got model.Subscription
	s.Do(t, http.MethodGet, path, token, nil).JSON(t, &got)
	if got.Headers["X-Key"] != "****s-ä€" {
		t.Fatalf("masked %q", got.Headers["X-Key"])
	}
	r := s.Do(t, http.MethodPut, path, token, map[string]any{"url": got.URL, "eventTypes": got.EventTypes, "headers": got.Headers, "description": "kept"})
	if r.Status != 200 {
		t.Fatalf("GET sent back: %d %s", r.Status, r.Body)
	}
	if h := sendTest(t, s, token, legacy.ID, rcv); h.Get("X-Key") != value {
		t.Fatalf("delivered %q", h.Get("X-Key"))
	}
}

// During a rolling upgrade an instance of the version before sealed headers
// changes a sealed subscription's headers by writing them in plain text
// alone: that newer write is what is answered and delivered, and the
// worker's sealing replaces the stale sealed headers with it.
func TestHeadersChangedByAnOldVersionWin(t *testing.T) {
	t.Parallel()
	s := start(t)
	tenant, token := s.NewTenant(t)
	rcv := newReceiver(t, 200)
	sub := createWith(t, s, token, rcv, map[string]string{"Authorization": bearer})
	ctx := context.Background()
	const newer = "Bearer newer-token-789"
	if err := storagetest.OldVersionHookHeaders(ctx, s.DB, tenant, sub.ID, `{"Authorization": "`+newer+`"}`); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	check := func(when string) {
		t.Helper()
		if r := s.Do(t, http.MethodGet, path, token, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"headers":{"Authorization":"****-789"}`) {
			t.Fatalf("%s: get %d %s", when, r.Status, r.Body)
		}
		if h := sendTest(t, s, token, sub.ID, rcv); h.Get("Authorization") != newer {
			t.Fatalf("%s: delivered %v", when, h)
		}
	}
	check("before sealing")
	s.App.SealHookHeaders(ctx)
	stored, err := hooksubs.New(s.DB).Get(ctx, tenant, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored.PlainHeaders) != "{}" || len(stored.HeadersSealed) == 0 || strings.Contains(string(stored.HeadersSealed), "newer-token") {
		t.Fatalf("after sealing: plain %s, sealed %q", stored.PlainHeaders, stored.HeadersSealed)
	}
	check("after sealing")
}

// A masked header value keeps the stored one only while the url keeps its
// destination (scheme, host, port, path and query): otherwise whoever may change
// the subscription could have its credentials sent to a host of their own.
func TestMaskedHeaderValuesStayWithTheirDestination(t *testing.T) {
	t.Parallel()
	s := start(t)
	_, token := s.NewTenant(t)
	rcv, other := newReceiver(t, 200), newReceiver(t, 200)
	const key = "api-key-e123"
	sub := createWith(t, s, token, rcv, map[string]string{"X-Api-Key": key})
	path := fmt.Sprintf("%s/%d", base, sub.ID)
	put := func(url string, value string) stacktest.Response {
		return s.Do(t, http.MethodPut, path, token, map[string]any{
			"url": url, "eventTypes": []string{"alert.sent"}, "headers": map[string]string{"X-Api-Key": value},
		})
	}

	// The same destination, a trailing slash added: the masked value is kept.
	if r := put(rcv.URL+"/", "****e123"); r.Status != 200 {
		t.Fatalf("same destination: %d %s", r.Status, r.Body)
	}
	if h := sendTest(t, s, token, sub.ID, rcv); h.Get("X-Api-Key") != key {
		t.Fatalf("same destination delivered %v", h)
	}

	// Another port, or another path or query on the same host, is a new
	// destination: the masked value is refused, naming the header and
	// exactly what changed, and nothing changes.
	for url, change := range map[string]string{
		other.URL + "/collect":                             "port and path",
		rcv.URL + "/elsewhere":                             "path",
		rcv.URL + "/?bucket=theirs":                        "query",
		strings.Replace(rcv.URL, "http://", "https://", 1): "scheme",
	} {
		f := failure(t, put(url, "****e123"))
		if f.Location != "body.headers.X-Api-Key" || !strings.Contains(f.ErrorMessage, "destination changed (the url has a new "+change+")") {
			t.Errorf("%s: %+v", url, f)
		}
	}
	var got model.Subscription
	s.Do(t, http.MethodGet, path, token, nil).JSON(t, &got)
	if got.URL != rcv.URL+"/" {
		t.Fatalf("a refused update changed the url to %s", got.URL)
	}
	if h := sendTest(t, s, token, sub.ID, rcv); h.Get("X-Api-Key") != key {
		t.Fatalf("after the refusals delivered %v", h)
	}
	if n := len(other.received()); n != 0 {
		t.Fatalf("the new destination got %d requests", n)
	}

	// The value itself may go to the new destination.
	if r := put(other.URL+"/collect", key); r.Status != 200 {
		t.Fatalf("new destination with the value: %d %s", r.Status, r.Body)
	}
	if h := sendTest(t, s, token, sub.ID, other); h.Get("X-Api-Key") != key {
		t.Fatalf("new destination delivered %v", h)
	}
}
