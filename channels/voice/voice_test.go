package voice_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/channelstate"
)

func TestSignature(t *testing.T) {
	body := []byte(`{"callId":"c1"}`)
	now := time.Unix(1_800_000_000, 0)
	h := voice.Sign("s3cret", body, now)
	cases := []struct {
		name    string
		secrets []string
		header  string
		body    []byte
		now     time.Time
		ok      bool
	}{
		{"good", []string{"s3cret"}, h, body, now, true},
		{"second secret", []string{"other", "s3cret"}, h, body, now, true},
		{"wrong secret", []string{"other"}, h, body, now, false},
		{"changed body", []string{"s3cret"}, h, []byte(`{"callId":"c2"}`), now, false},
		{"too old", []string{"s3cret"}, h, body, now.Add(6 * time.Minute), false},
		{"malformed", []string{"s3cret"}, "v1=abc", body, now, false},
		{"empty secret", []string{""}, voice.Sign("", body, now), body, now, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := voice.Verify(c.secrets, c.header, c.body, c.now)
			if (err == nil) != c.ok {
				t.Fatalf("Verify = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, voice.ErrSignature) {
				t.Fatalf("error %v is not ErrSignature", err)
			}
		})
	}
}

func TestRequestShape(t *testing.T) {
	s := &voice.Sender{From: "+15550100", CallbackURL: "https://x/cb"}
	cases := []struct {
		name string
		msg  channels.Message
		want func(voice.CallRequest) bool
		err  bool
	}{
		{"speech", channels.Message{Key: "k", To: "+15551234567", Text: "Evacuate"},
			func(r voice.CallRequest) bool {
				return r.Say != nil && r.Say.Text == "Evacuate" && r.Play == nil && r.Repeat == 1 && r.MachineDetection == voice.LeaveMessage && r.Gather == nil &&
					r.From == "+15550100" && r.Say.Language == "en-US"
			}, false},
		{"caller id and language", channels.Message{Key: "k", To: "+15551234567", Text: "Evacuez", Options: voice.Options{CallerID: "+15550199", Language: "fr-CA"}},
			func(r voice.CallRequest) bool {
				return r.From == "+15550199" && r.Say != nil && r.Say.Language == "fr-CA"
			}, false},
		{"audio, repeat, confirm", channels.Message{Key: "k", To: "+15551234567", Text: "x", Options: voice.Options{
			AudioURL: "https://files/a.wav", Repeat: 3, Confirm: true, AnsweringMachine: voice.HangUp}},
			func(r voice.CallRequest) bool {
				return r.Play != nil && r.Say == nil && r.Repeat == 3 && r.Gather != nil && r.MachineDetection == voice.HangUp
			}, false},
		{"repeat clamped", channels.Message{Key: "k", To: "+1", Text: "x", Options: voice.Options{Repeat: 99}},
			func(r voice.CallRequest) bool { return r.Repeat == 10 }, false},
		{"nothing to say", channels.Message{Key: "k", To: "+1"}, nil, true},
		{"bad machine behaviour", channels.Message{Key: "k", To: "+1", Text: "x", Options: voice.Options{AnsweringMachine: "Dance"}}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := s.Request(c.msg)
			if (err != nil) != c.err {
				t.Fatalf("err %v", err)
			}
			if err == nil && !c.want(r) {
				t.Fatalf("request %+v", r)
			}
		})
	}
}

// callbackServer plays our status-callback operation for tests of this package.
func callbackServer(t *testing.T, calls *voice.Calls, secret, tenant string, ch channels.Channel) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, err := voice.Receive(r.Context(), calls, []string{secret}, tenant, ch, r.Header.Get(voice.SignatureHeader), body)
		switch {
		case errors.Is(err, voice.ErrSignature):
			w.WriteHeader(http.StatusUnauthorized)
		case errors.Is(err, voice.ErrStaleCallback):
			w.WriteHeader(http.StatusOK)
		case err != nil:
			t.Errorf("record callback: %v", err)
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCallsCallbacksAndRedial(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	calls := &voice.Calls{DB: db}
	prov := voicetest.New(t, "tok-voice", "sign-secret")
	cb := callbackServer(t, calls, "sign-secret", tenant, channels.Voice)
	snd := &voice.Sender{Endpoint: providerhttp.Endpoint{URL: prov.URL, Token: "tok-voice", Client: providerhttp.NewClient(0, 0)}, From: "+15550001000", CallbackURL: cb.URL, Calls: calls}

	prov.Script("+15550000002", voicetest.Outcome{Status: voice.CallbackBusy}, voicetest.Outcome{Status: voice.CallbackAnswered, AnsweredBy: "machine"})
	prov.Script("+15550000003", voicetest.Outcome{Status: voice.CallbackAnswered, AnsweredBy: "human", Digits: "1"})
	prov.Script("+15550000004", voicetest.Outcome{Status: voice.CallbackNoAnswer})
	prov.Script("+15550000005", voicetest.Outcome{Status: voice.CallbackFailed})
	// The longest retry interval: the busy call is not due before the test
	// brings its retry forward, however slowly the callbacks come.
	redial := voice.Options{MaxAttempts: 2, RetryIntervalSeconds: 3600}
	confirm, once := redial, redial
	confirm.Confirm, once.MaxAttempts = true, 1
	msgs := []channels.Message{
		{Key: "a1", Tenant: tenant, To: "+15550000001", Text: "Shelter in place", Options: redial},
		{Key: "a2", Tenant: tenant, To: "+15550000002", Text: "Shelter in place", Options: redial},
		{Key: "a3", Tenant: tenant, To: "+15550000003", Text: "Shelter in place", Options: confirm},
		{Key: "a4", Tenant: tenant, To: "+15550000004", Text: "Shelter in place", Options: once},
		{Key: "a5", Tenant: tenant, To: "+15550000005", Text: "Shelter in place", Options: redial},
		{Key: "a6", Tenant: tenant, To: "555", Text: "Shelter in place", Options: redial},
	}
	res, err := snd.Send(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[:5] {
		if r.Outcome != channels.Sent || r.ProviderMessageID == "" || r.Key != msgs[i].Key {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if r := res[5]; r.Outcome != channels.Failed || !r.Permanent {
		t.Fatalf("a bad number is a permanent failure: %+v", r)
	}
	if len(prov.Problems()) != 1 || !strings.Contains(prov.Problems()[0], "E.164") {
		t.Fatalf("the loopback should have refused only the bad number: %v", prov.Problems())
	}

	want := map[string]string{"a1": voice.StatusAnswered, "a2": voice.StatusBusy, "a3": voice.StatusConfirmed, "a4": voice.StatusNoAnswer, "a5": voice.StatusFailed}
	stacktest.Eventually(t, 30*time.Second, "status callbacks", func() bool {
		for k, st := range want {
			c, err := calls.Get(ctx, tenant, k)
			if err != nil || c.Status != st {
				return false
			}
		}
		return true
	})
	a2, _ := calls.Get(ctx, tenant, "a2")
	if a2.NextAttemptAt == nil || a2.Attempts != 1 {
		t.Fatalf("a busy call with attempts left is scheduled again: %+v", a2)
	}
	a4, _ := calls.Get(ctx, tenant, "a4")
	if a4.NextAttemptAt != nil || !a4.Final() {
		t.Fatalf("an unanswered call without attempts left is final: %+v", a4)
	}
	a3, _ := calls.Get(ctx, tenant, "a3")
	if a3.ConfirmedAt == nil || a3.Digits != "1" {
		t.Fatalf("press 1 confirms: %+v", a3)
	}
	if n, _ := calls.Pending(ctx, tenant, nil); n != 1 {
		t.Fatalf("pending calls %d, want 1 (the busy one)", n)
	}

	// The retry time has not come: nothing is dialled.
	if n, err := voice.Redial(ctx, calls, func(channels.Channel) (channels.Sender, error) { return snd, nil }, tenant, nil, 10); err != nil || n != 0 {
		t.Fatalf("early redial %d %v", n, err)
	}
	// Bring the retry forward to a second from now.
	if _, err := (&channelstate.Calls{DB: db}).Update(ctx, tenant, string(channels.Voice), "a2", func(cur channelstate.CurrentCall) (channelstate.CallUpdate, error) {
		return channelstate.CallUpdate{Status: cur.Status, AnsweredBy: cur.AnsweredBy, ProviderCallID: cur.ProviderCallID, Error: cur.Error, RetryAfterSeconds: 1}, nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if n, err := voice.Redial(ctx, calls, func(channels.Channel) (channels.Sender, error) { return snd, nil }, tenant, nil, 10); err != nil || n != 1 {
		t.Fatalf("redial %d %v", n, err)
	}
	stacktest.Eventually(t, 30*time.Second, "the second attempt answered", func() bool {
		c, err := calls.Get(ctx, tenant, "a2")
		return err == nil && c.Status == voice.StatusAnswered && c.Attempts == 2 && c.AnsweredBy == "machine"
	})
	var keys []string
	for _, c := range prov.Calls() {
		if c.Request.To == "+15550000002" {
			keys = append(keys, c.IdempotencyKey)
		}
	}
	if strings.Join(keys, ",") != "a2,a2/2" {
		t.Fatalf("each attempt has its own idempotency key: %v", keys)
	}
	// The loopback counts a callback once our answer to it has arrived.
	stacktest.Eventually(t, 30*time.Second, "six callbacks acknowledged", func() bool {
		n, _ := prov.Callbacks()
		return n == 6
	})
	if n, errs := prov.Callbacks(); n != 6 || len(errs) != 0 {
		t.Fatalf("callbacks %d, errors %v", n, errs)
	}

	// A retried batch does not place the same call twice.
	before := len(prov.Calls())
	if _, err := snd.Send(ctx, msgs[:1]); err != nil {
		t.Fatal(err)
	}
	if len(prov.Calls()) != before {
		t.Fatal("a retried request with the same key placed a new call")
	}
}

// TestCallsStoredWithMetadata: calls recorded before messages had typed
// options keep those options in a Metadata map of strings; a callback
// still finds whether the call asks for a confirmation, and a redial sends
// the message with its options, alert and recipient.
func TestCallsStoredWithMetadata(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	store := &channelstate.Calls{DB: db}
	calls := &voice.Calls{DB: db}
	alertID := int64(42)
	old := func(key, to string) {
		t.Helper()
		msg := `{"Key":"` + key + `","Tenant":"` + tenant + `","Channel":"voice","To":"` + to + `","Subject":"","Text":"Shelter in place",
			"HTML":"","Attachments":null,"Metadata":{"alertId":"42","recipientId":"3","priority":"Emergency","callerId":"+15550001000",
			"voice.repeat":"3","voice.confirm":"true","voice.language":"es-US","voice.answeringMachine":"HangUp",
			"voice.maxAttempts":"2","voice.retryIntervalSeconds":"30",
			"voice.audioKey":"tenants/x/a.wav","voice.audioUrl":"https://objects.example/a.wav?X-Amz-Expires=7200"}}`
		err := store.Prepare(ctx, channelstate.NewCall{Tenant: tenant, Key: key, Channel: "voice", AlertID: &alertID, Recipient: to,
			Message: []byte(msg), Attempt: 1, MaxAttempts: 2, RetryIntervalSeconds: 30})
		if err == nil {
			err = store.Placed(ctx, tenant, key, "p-"+key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	old("old1", "+15550000001")
	old("old2", "+15550000002")

	c, err := calls.Record(ctx, tenant, channels.Voice, voice.Callback{CallID: "p-old1", Reference: "old1", Status: voice.CallbackAnswered, AnsweredBy: "human", Digits: "1"})
	if err != nil || c.Status != voice.StatusConfirmed || c.ConfirmedAt == nil {
		t.Fatalf("press 1 on a call stored with metadata: %+v %v", c, err)
	}
	if c, err = calls.Record(ctx, tenant, channels.Voice, voice.Callback{CallID: "p-old2", Reference: "old2", Status: voice.CallbackBusy}); err != nil || c.NextAttemptAt == nil {
		t.Fatalf("busy: %+v %v", c, err)
	}
	if _, err := store.Update(ctx, tenant, "voice", "old2", func(cur channelstate.CurrentCall) (channelstate.CallUpdate, error) {
		return channelstate.CallUpdate{Status: cur.Status, ProviderCallID: cur.ProviderCallID, RetryAfterSeconds: 1}, nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	due, err := calls.ClaimDue(ctx, tenant, &alertID, 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due %+v %v", due, err)
	}
	m := due[0]
	if m.Key != "old2" || m.Tenant != tenant || m.To != "+15550000002" || m.Text != "Shelter in place" || m.AlertID != 42 || m.RecipientID != 3 {
		t.Fatalf("redialled message %+v", m)
	}
	// The audio link stored with the first attempt has expired by now: the
	// key is linked again.
	want := voice.Options{AudioKey: "tenants/x/a.wav", Repeat: 3, AnsweringMachine: voice.HangUp, Confirm: true, Language: "es-US",
		MaxAttempts: 2, RetryIntervalSeconds: 30, Attempt: 2}
	if m.Options != want {
		t.Fatalf("options %+v, want %+v", m.Options, want)
	}
}

func TestForgedCallbackIsRefused(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	calls := &voice.Calls{DB: db}
	// The provider signs with a secret the tenant does not have.
	prov := voicetest.New(t, "tok", "not-the-tenant-secret")
	cb := callbackServer(t, calls, "tenant-secret", tenant, channels.Voice)
	snd := &voice.Sender{Endpoint: providerhttp.Endpoint{URL: prov.URL, Token: "tok", Client: providerhttp.NewClient(0, 0)}, From: "+15550001000", CallbackURL: cb.URL, Calls: calls}
	if _, err := snd.Send(ctx, []channels.Message{{Key: "f1", Tenant: tenant, To: "+15550000001", Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 30*time.Second, "the callback attempt", func() bool {
		_, errs := prov.Callbacks()
		return len(errs) == 1
	})
	if c, _ := calls.Get(ctx, tenant, "f1"); c.Status != voice.StatusRequested {
		t.Fatalf("a forged callback changed the call: %+v", c)
	}
}

func TestWrongTokenIsPermanent(t *testing.T) {
	t.Parallel()
	prov := voicetest.New(t, "right", "s")
	snd := &voice.Sender{Endpoint: providerhttp.Endpoint{URL: prov.URL, Token: "wrong", Client: providerhttp.NewClient(0, 0)}, From: "+15550001000", CallbackURL: "http://127.0.0.1:1/cb"}
	res, err := snd.Send(context.Background(), []channels.Message{{Key: "k", Tenant: "1", To: "+15550000001", Text: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != channels.Failed || !res[0].Permanent || !strings.Contains(res[0].Error, "401") {
		t.Fatalf("%+v", res[0])
	}
}
