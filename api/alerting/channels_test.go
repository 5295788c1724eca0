package alerting_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap/captest"
	"github.com/tocsin/tocsin/channels/fax/faxtest"
	"github.com/tocsin/tocsin/channels/neighborhood/neighborhoodtest"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/channels/push/pushtest"
	"github.com/tocsin/tocsin/channels/social/socialtest"
	"github.com/tocsin/tocsin/channels/teamchat/teamchattest"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// loopbacks are every provider's loopback counterpart, configured as a
// tenant's channel providers.
type loopbacks struct {
	voice        *voicetest.Server
	push, app    *pushtest.Server
	fax          *faxtest.Server
	cap          *captest.Server
	chat         *teamchattest.Server
	social       *socialtest.Server
	neighborhood *neighborhoodtest.Server
}

func configureLoopbacks(t *testing.T, s *stacktest.Stack, tenant string) *loopbacks {
	t.Helper()
	l := &loopbacks{
		voice: voicetest.New(t, "voice-token", "voice-signing-secret"),
		push:  pushtest.New(t, "push-token"), app: pushtest.New(t, "app-token"),
		fax:    faxtest.New(t, "fax-token"),
		cap:    captest.New(t, "cap-token"),
		chat:   teamchattest.New(t),
		social: socialtest.New(t, map[string]string{"county": "tok-a", "city": "tok-b"}),
		neighborhood: neighborhoodtest.New(t, map[string]neighborhoodtest.Account{
			"pd": {Token: "tok-n", Groups: []string{"g1", "g2"}}}),
	}
	st := s.App.ChannelProviders().Store
	ctx := context.Background()
	put := func(ch channels.Channel, set providers.Settings) {
		t.Helper()
		if _, _, err := st.Put(ctx, tenant, ch, set); err != nil {
			t.Fatalf("%s: %v", ch, err)
		}
	}
	vp := []providers.Provider{{URL: l.voice.URL, Token: "voice-token", From: "+15550001000", SigningSecret: "voice-signing-secret"}}
	put(channels.Voice, providers.Settings{Providers: vp})
	put(channels.Etn, providers.Settings{Providers: vp, MaxConcurrentCalls: 2})
	put(channels.Push, providers.Settings{Providers: []providers.Provider{{URL: l.push.URL, Token: "push-token"}}})
	put(channels.MyAlertsApp, providers.Settings{Providers: []providers.Provider{{URL: l.app.URL, Token: "app-token"}}})
	put(channels.Fax, providers.Settings{Providers: []providers.Provider{{URL: l.fax.URL, Token: "fax-token", From: "+15550002000"}}})
	capP := []providers.Provider{{URL: l.cap.URL + "/cap", Token: "cap-token", SenderID: "oem@county.example"}}
	put(channels.Eas, providers.Settings{Providers: capP})
	put(channels.MobileBroadcast, providers.Settings{Providers: capP})
	put(channels.TeamChat, providers.Settings{Targets: []providers.Target{
		{Name: "ops", URL: l.chat.Webhook("teams", "s3"), Style: "teams"},
		{Name: "eng", URL: l.chat.Webhook("slack", "s4"), Style: "slack"}}})
	put(channels.SocialPostA, providers.Settings{Providers: []providers.Provider{{URL: l.social.URL}}, Accounts: []providers.Account{{ID: "county", Name: "County", Token: "tok-a"}}})
	put(channels.SocialPostB, providers.Settings{Providers: []providers.Provider{{URL: l.social.URL}}, Accounts: []providers.Account{{ID: "city", Name: "City", Token: "tok-b"}}})
	put(channels.Neighborhood, providers.Settings{Providers: []providers.Provider{{URL: l.neighborhood.URL}},
		Accounts: []providers.Account{{ID: "pd", Name: "PD", Token: "tok-n", Groups: []providers.Group{{ID: "g1", Name: "North"}, {ID: "g2", Name: "South"}}}}})
	return l
}

func (l *loopbacks) checkProblems(t *testing.T) {
	t.Helper()
	for _, srv := range []interface{ Problems() []string }{l.voice, l.push, l.app, l.fax, l.cap, l.chat, l.social, l.neighborhood} {
		if p := srv.Problems(); len(p) != 0 {
			t.Errorf("a loopback saw problems: %v", p)
		}
	}
}

// startWithPublicURL starts the stack with a public URL that reaches its
// API (through a proxy started first), so providers' status callbacks
// arrive.
func startWithPublicURL(t *testing.T, configure ...func(*config.Config)) *stacktest.Stack {
	t.Helper()
	var target atomic.Pointer[url.URL]
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := target.Load()
		if u == nil {
			http.Error(w, "not started", http.StatusServiceUnavailable)
			return
		}
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	s := stacktest.Start(t, append(configure, func(c *config.Config) {
		c.PublicURL = proxy.URL
		// The providers are loopback servers speaking plain http.
		c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true
	})...)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	target.Store(u)
	return s
}

type deliveryRow struct {
	Seq     int64  `db:"seq"`
	Channel string `db:"channel"`
	Address string `db:"address"`
	Status  string `db:"status"`
	Error   string `db:"error"`
}

type broadcastRow struct {
	Channel     string `db:"channel"`
	Destination string `db:"destination"`
	Status      string `db:"status"`
	Error       string `db:"error"`
}

// TestOneAlertOnAllThirteenChannels sends one alert on every channel, each
// through its loopback counterpart (email and text through the sandbox).
func TestOneAlertOnAllThirteenChannels(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := startWithPublicURL(t, withSandbox)
	tenant := stacktest.NewTenant()
	tok := s.Token(t, tenant)
	l := configureLoopbacks(t, s, tenant)
	ada := &contact{First: "Ada", Last: "Lovelace", Phone: "+15550100001", Email: "ada-" + tenant + "@example.com"}
	alan := &contact{First: "Alan", Last: "Turing", Phone: "+15550100002", Email: "alan-" + tenant + "@example.com"}
	seed(t, s, tenant, ada, alan)
	ctx := context.Background()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO person_devices (tenant_id, person_id, app, token) VALUES ($1, $2, 'push', 'ada-phone'), ($1, $2, 'push', 'ada-tablet'), ($1, $2, 'myalerts', 'ada-app')`, []any{tenant, ada.ID}},
		{`INSERT INTO person_phones (tenant_id, person_id, number, phone_type, can_text, can_call) VALUES ($1, $2, '+15550109999', 'Fax', false, false)`, []any{tenant, ada.ID}},
	} {
		if _, err := s.DB.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	l.voice.Script(ada.Phone, voicetest.Outcome{Status: "answered", AnsweredBy: "human", Digits: "1"})
	l.voice.Script(alan.Phone, voicetest.Outcome{Status: "busy"})
	alert := map[string]any{"settings": map[string]any{
		"message":  map[string]any{"subject": "Evacuate", "body": "Hello {{firstName}}, leave the building now."},
		"priority": map[string]any{"priority": "Emergency", "loudTone": map[string]any{"enabled": true}},
		"channels": map[string]any{
			"email":           map[string]any{"enabled": true},
			"text":            map[string]any{"enabled": true},
			"etn":             map[string]any{"enabled": true},
			"voice":           map[string]any{"enabled": true, "repeat": 2, "pressOneToConfirm": true},
			"push":            map[string]any{"enabled": true, "title": "Evacuate now", "loudTone": true},
			"myAlertsApp":     map[string]any{"enabled": true},
			"fax":             map[string]any{"enabled": true, "coverPage": true},
			"eas":             map[string]any{"enabled": true, "eventCode": "EVI", "sameCodes": []string{"041005"}},
			"mobileBroadcast": map[string]any{"enabled": true, "text": "Evacuate the campus now."},
			"teamChat":        map[string]any{"enabled": true},
			"socialPostA":     map[string]any{"enabled": true},
			"socialPostB":     map[string]any{"enabled": true},
			"neighborhood":    map[string]any{"enabled": true, "groups": []string{"g2"}},
		},
		"recipients": map[string]any{"contactIds": []int64{ada.ID, alan.ID}},
	}}
	res := send(t, s, tok, alert)
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" {
		t.Fatalf("alert status %+v", st)
	}

	var rows []deliveryRow
	if err := s.DB.SelectContext(ctx, &rows, `SELECT d.seq, d.channel, d.address, d.status, d.error FROM alert_deliveries d
		WHERE d.tenant_id = $1 AND d.alert_id = $2 ORDER BY d.channel, d.seq`, tenant, res.AlertID); err != nil {
		t.Fatal(err)
	}
	got := map[string]deliveryRow{}
	for _, r := range rows {
		got[r.Channel+"/"+strings.Split(strings.TrimPrefix(r.Address, "+"), ",")[0]] = r
	}
	want := map[string]string{
		"email/ada-" + tenant + "@example.com":  "Sent",
		"email/alan-" + tenant + "@example.com": "Sent",
		"text/15550100001":                      "Sent",
		"text/15550100002":                      "Sent",
		"push/ada-phone":                        "Sent",
		"push/":                                 "Failed", // Alan has no device
		"myAlertsApp/ada-app":                   "Sent",
		"myAlertsApp/":                          "Failed",
		"fax/15550109999":                       "Sent",
		"fax/":                                  "Failed",
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g.Status != w {
			t.Errorf("%s: got %+v, want %s (all rows %+v)", k, g, w, rows)
		}
	}
	if len(rows) != 14 || got["voice/15550100001"].Status == "" || got["voice/15550100002"].Status == "" ||
		got["etn/15550100001"].Status == "" || got["etn/15550100002"].Status == "" {
		t.Errorf("%d delivery rows, want one per recipient and channel: %+v", len(rows), rows)
	}
	if r := got["push/ada-phone"]; r.Address != "ada-phone,ada-tablet" {
		t.Errorf("push row address %q, want both tokens", r.Address)
	}

	var bc []broadcastRow
	if err := s.DB.SelectContext(ctx, &bc, `SELECT channel, destination, status, error FROM alert_broadcasts
		WHERE tenant_id = $1 AND alert_id = $2 ORDER BY channel, destination`, tenant, res.AlertID); err != nil {
		t.Fatal(err)
	}
	wantBC := []string{"eas/eas", "mobileBroadcast/mobileBroadcast", "neighborhood/pd", "socialPostA/county", "socialPostB/city", "teamChat/eng", "teamChat/ops"}
	if len(bc) != len(wantBC) {
		t.Fatalf("broadcast rows %+v", bc)
	}
	for i, b := range bc {
		if b.Channel+"/"+b.Destination != wantBC[i] || (b.Status != "Sent" && b.Status != "Delivered") {
			t.Errorf("broadcast %d: %+v, want %s delivered", i, b, wantBC[i])
		}
	}

	// The results show every channel: per recipient, per destination.
	r0 := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results", res.AlertID), tok, nil)
	var summary struct {
		Channels []struct {
			Channel                        string
			Total, Sent, Delivered, Failed int64
		}
	}
	r0.JSON(t, &summary)
	wantTotals := map[string]int64{"email": 2, "text": 2, "voice": 2, "etn": 2, "push": 2, "myAlertsApp": 2, "fax": 2,
		"eas": 1, "mobileBroadcast": 1, "teamChat": 2, "socialPostA": 1, "socialPostB": 1, "neighborhood": 1}
	if len(summary.Channels) != 13 {
		t.Fatalf("results show %d channels: %s", len(summary.Channels), r0.Body)
	}
	for _, c := range summary.Channels {
		if c.Total != wantTotals[c.Channel] || c.Sent+c.Delivered+c.Failed != c.Total {
			t.Errorf("results of %s: %+v, want %d final", c.Channel, c, wantTotals[c.Channel])
		}
	}

	// What each provider received.
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, c := range []*contact{ada, alan} {
		if m, err := sb.SMTP.WaitTo(ectx, c.Email); err != nil || !strings.Contains(m.Text, "Hello "+c.First) {
			t.Errorf("email to %s: %+v %v", c.First, m, err)
		}
		if m, err := sb.SMS.WaitTo(ectx, c.Phone); err != nil || !strings.Contains(m.Body, "Hello "+c.First) {
			t.Errorf("text to %s: %+v %v", c.First, m, err)
		}
	}
	calls := l.voice.Calls()
	if len(calls) != 4 { // voice and ETN, both recipients
		t.Fatalf("%d calls", len(calls))
	}
	for _, c := range calls {
		if strings.Contains(c.IdempotencyKey, ":etn:") {
			continue
		}
		if c.Request.Gather == nil || c.Request.Repeat != 2 {
			t.Errorf("call without press-1 or repeat: %+v", c.Request)
		}
	}
	pushes := l.push.Received()
	if len(pushes) != 2 {
		t.Fatalf("push notifications %+v", pushes)
	}
	for _, n := range pushes {
		if n.Title != "Evacuate now" || n.InterruptionLevel != "critical" || !strings.Contains(n.Body, "Hello Ada") {
			t.Errorf("push notification %+v", n)
		}
	}
	if a := l.app.Received(); len(a) != 1 || a[0].To != "ada-app" {
		t.Errorf("app notifications %+v", a)
	}
	if f := l.fax.Faxes(); len(f) != 1 || !f[0].CoverPage {
		t.Errorf("faxes %+v", f)
	}
	docs := l.cap.Documents()
	if len(docs) != 2 {
		t.Fatalf("%d CAP documents", len(docs))
	}
	for _, d := range docs {
		if err := captest.Validate(t, d); err != nil {
			t.Error(err)
		}
	}
	if p := l.chat.Posts(); len(p) != 2 {
		t.Errorf("chat posts %+v", p)
	}
	if p := l.social.Posts(); len(p) != 2 {
		t.Errorf("social posts %+v", p)
	}
	if p := l.neighborhood.Posts(); len(p) != 1 {
		t.Errorf("neighborhood posts %+v", p)
	}
	l.checkProblems(t)

	// The calls' status callbacks are receipts: Ada answered and pressed 1
	// (delivered and confirmed), Alan's line was busy (failed).
	stacktest.Eventually(t, 60*time.Second, "the call statuses to reach the deliveries", func() bool {
		var n int
		_ = s.DB.GetContext(ctx, &n, `SELECT count(*) FROM alert_deliveries d JOIN alert_recipients r USING (alert_id, seq)
			WHERE d.alert_id = $1 AND d.channel = 'voice' AND ((d.seq = 1 AND d.status = 'Delivered' AND r.confirmed_at IS NOT NULL)
				OR (d.seq = 2 AND d.status = 'Failed'))`, res.AlertID)
		if n != 2 {
			var dbg []string
			_ = s.DB.SelectContext(ctx, &dbg, `SELECT d.seq || ' ' || d.status || ' ' || d.error || ' ' || coalesce(r.confirmed_at::text, '-') FROM alert_deliveries d JOIN alert_recipients r USING (alert_id, seq) WHERE d.alert_id = $1 AND d.channel = 'voice'`, res.AlertID)
			var calls []string
			_ = s.DB.SelectContext(ctx, &calls, `SELECT call_key || ' ' || status || ' ' || digits FROM voice_calls WHERE alert_id = $1`, res.AlertID)
			n, cbs := l.voice.Callbacks()
			t.Logf("rows %v calls %v callbacks %d %v", dbg, calls, n, cbs)
		}
		return n == 2
	})
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/voice", res.AlertID), tok, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"confirmed":true`) {
		t.Errorf("voice results %d %s", r.Status, r.Body)
	}

	// The neighborhood page: one row per account and group posted to.
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/social/neighborhood", res.AlertID), tok, nil)
	var nb struct {
		Items []struct {
			Account struct{ ID, Name string }
			Group   *struct{ ID, Name string }
			Status  string
		}
	}
	r.JSON(t, &nb)
	if r.Status != 200 || len(nb.Items) != 1 || nb.Items[0].Account.Name != "PD" || nb.Items[0].Group == nil ||
		nb.Items[0].Group.Name != "South" || nb.Items[0].Status != "Delivered" {
		t.Errorf("neighborhood status %d %s", r.Status, r.Body)
	}
}

// TestEtnCallsEveryNumberInsideTheArea sends an ETN alert with an area: it
// calls the contacts' phones at locations inside it and the points of an
// imported address-point list inside it, and the ETN page lists each call.
func TestEtnCallsEveryNumberInsideTheArea(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant := stacktest.NewTenant()
	tok := s.Token(t, tenant)
	l := configureLoopbacks(t, s, tenant)
	inside := &contact{First: "In", Last: "Side", Phone: "+15550200001", HasLocation: true, Lat: 41.8781, Lng: -87.6298}
	outside := &contact{First: "Out", Last: "Side", Phone: "+15550200002", HasLocation: true, Lat: 40.0, Lng: -80.0}
	seed(t, s, tenant, inside, outside)
	csv := "phone,latitude,longitude,name\n+15550300001,41.8790,-87.6300,Well 1\n+15550300002,45.0,-90.0,Far well\n"
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status/100 != 2 {
		t.Fatalf("import points %d %s", r.Status, r.Body)
	}
	l.voice.Script("+15550300001", voicetest.Outcome{Status: "no-answer"})
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 2000}}},
	}})
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" {
		t.Fatalf("alert status %+v", st)
	}
	var page struct {
		Totals struct{ Total, Delivered, Failed int64 }
		Items  []struct {
			Phone  string
			Status string
		}
	}
	stacktest.Eventually(t, 60*time.Second, "both calls to end", func() bool {
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/etn", res.AlertID), tok, nil)
		if r.Status != 200 {
			t.Fatalf("etn page %d %s", r.Status, r.Body)
		}
		r.JSON(t, &page)
		return page.Totals.Delivered+page.Totals.Failed == 2
	})
	if page.Totals.Total != 2 || len(page.Items) != 2 || page.Items[0].Phone != "+15550200001" || page.Items[0].Status != "Delivered" ||
		page.Items[1].Phone != "+15550300001" || page.Items[1].Status != "Failed" {
		t.Fatalf("etn page %+v", page)
	}
	calls := l.voice.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want the two numbers inside the area", len(calls))
	}
	l.checkProblems(t)
}

// TestCapCancelReferencesTheAlertsMessages cancels an alert sent on EAS and
// mobile broadcast: each endpoint gets a Cancel that references the
// message it got before, valid against the CAP 1.2 schema.
func TestCapCancelReferencesTheAlertsMessages(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant := stacktest.NewTenant()
	tok := s.Token(t, tenant)
	l := configureLoopbacks(t, s, tenant)
	ada := &contact{First: "Ada", Last: "Lovelace", Phone: "+15550100001"}
	seed(t, s, tenant, ada)
	plain := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "A drill."},
		"channels":   map[string]any{"teamChat": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}})
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Evacuate", "body": "Leave now."},
		"channels": map[string]any{
			"eas":             map[string]any{"enabled": true, "eventCode": "EVI", "sameCodes": []string{"041005"}},
			"mobileBroadcast": map[string]any{"enabled": true},
		},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}})
	waitDone(t, s, tok, res.AlertID)
	waitDone(t, s, tok, plain.AlertID)
	first := l.cap.Documents()
	if len(first) != 2 {
		t.Fatalf("%d CAP documents before the cancel", len(first))
	}

	r := s.Do(t, http.MethodPost, fmt.Sprintf("/v2/alerts/%d/capUpdates", plain.AlertID), tok, map[string]any{"msgType": "Cancel"})
	if r.Status != http.StatusConflict {
		t.Errorf("cancel of an alert without CAP messages: %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodPost, fmt.Sprintf("/v2/alerts/%d/capUpdates", res.AlertID), tok, map[string]any{"msgType": "Retract"})
	if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
		t.Errorf("unknown msgType: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPost, "/v2/alerts/999999999/capUpdates", tok, map[string]any{"msgType": "Cancel"}); r.Status != http.StatusNotFound {
		t.Errorf("unknown alert: %d", r.Status)
	}
	r = s.Do(t, http.MethodPost, fmt.Sprintf("/v2/alerts/%d/capUpdates", res.AlertID), tok, map[string]any{"msgType": "Cancel", "note": "Issued in error."})
	if r.Status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	var out struct {
		Sequence int
		Channels []string
	}
	r.JSON(t, &out)
	if out.Sequence != 1 || len(out.Channels) != 2 {
		t.Errorf("cancel response %s", r.Body)
	}
	var docs [][]byte
	stacktest.Eventually(t, 60*time.Second, "the cancels to arrive", func() bool {
		docs = l.cap.Documents()
		return len(docs) == 4
	})
	for _, d := range docs[2:] {
		if err := captest.Validate(t, d); err != nil {
			t.Error(err)
		}
		doc := string(d)
		if !strings.Contains(doc, "<msgType>Cancel</msgType>") || !strings.Contains(doc, "<references>oem@county.example,") ||
			!strings.Contains(doc, "<note>Issued in error.</note>") {
			t.Errorf("cancel document %s", doc)
		}
	}
	var refsOK int
	if err := s.DB.GetContext(context.Background(), &refsOK, `SELECT count(*) FROM cap_messages c
		WHERE c.tenant_id = $1 AND c.alert_id = $2 AND c.msg_type = 'Cancel'
			AND EXISTS (SELECT 1 FROM cap_messages o WHERE o.alert_id = c.alert_id AND o.channel = c.channel AND o.msg_type = 'Alert'
				AND position(o.identifier IN c.refs) > 0)`, tenant, res.AlertID); err != nil || refsOK != 2 {
		t.Errorf("each cancel references its channel's alert message: %d %v", refsOK, err)
	}
	l.checkProblems(t)
}

// TestBusyCallIsRedialled: a busy line is called again after redialSeconds
// (the SendAlert workflow's redial step) and its answer is the receipt.
func TestBusyCallIsRedialled(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant := stacktest.NewTenant()
	tok := s.Token(t, tenant)
	l := configureLoopbacks(t, s, tenant)
	alan := &contact{First: "Alan", Last: "Turing", Phone: "+15550100002"}
	seed(t, s, tenant, alan)
	l.voice.Script(alan.Phone, voicetest.Outcome{Status: "busy"}, voicetest.Outcome{Status: "answered", AnsweredBy: "human"})
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "This is a drill."},
		"channels":   map[string]any{"voice": map[string]any{"enabled": true, "callAttempts": 2, "redialSeconds": 30}},
		"recipients": map[string]any{"contactIds": []int64{alan.ID}},
	}})
	stacktest.Eventually(t, 90*time.Second, "the redialled call to be answered", func() bool {
		var st string
		_ = s.DB.GetContext(context.Background(), &st, `SELECT status FROM alert_deliveries WHERE alert_id = $1 AND channel = 'voice'`, res.AlertID)
		return st == "Delivered"
	})
	if n := len(l.voice.Calls()); n != 2 {
		t.Errorf("%d calls, want the busy one and the redial", n)
	}
	l.checkProblems(t)
}
