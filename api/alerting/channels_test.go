package alerting_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap/captest"
	"github.com/tocsin/tocsin/channels/fax/faxtest"
	"github.com/tocsin/tocsin/channels/neighborhood/neighborhoodtest"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/channels/push"
	"github.com/tocsin/tocsin/channels/push/pushtest"
	"github.com/tocsin/tocsin/channels/social/socialtest"
	"github.com/tocsin/tocsin/channels/teamchat/teamchattest"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/results"
	"github.com/tocsin/tocsin/storage/storagetest"
	"github.com/tocsin/tocsin/workflows"
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

// apiPerson is a directory user created through the API.
type apiPerson struct {
	ID                  int64
	First, Email, Phone string
}

// configureLoopbacks configures every channel's providers of the token's
// tenant with putChannelProviderSettings. With a failing push server, ETN's
// primary is a closed port and push's primary is that server, each with a
// working fallback.
func configureLoopbacks(t *testing.T, s *stacktest.Stack, tok string, failing *pushtest.Server) *loopbacks {
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
	put := func(ch channels.Channel, set providers.Settings) {
		t.Helper()
		if r := s.Do(t, http.MethodPut, "/v2/settings/channels/"+string(ch), tok, set); r.Status != http.StatusOK {
			t.Fatalf("configure %s: %d %s", ch, r.Status, r.Body)
		}
	}
	voiceP := providers.Provider{URL: l.voice.URL, Token: "voice-token", From: "+15550001000", SigningSecret: "voice-signing-secret"}
	etnP := []providers.Provider{voiceP}
	pushP := []providers.Provider{{URL: l.push.URL, Token: "push-token"}}
	if failing != nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String()
		ln.Close()
		etnP = append([]providers.Provider{{URL: closed, Token: "gone", From: "+15550001000", SigningSecret: "voice-signing-secret"}}, etnP...)
		pushP = append([]providers.Provider{{URL: failing.URL, Token: "push-token"}}, pushP...)
	}
	put(channels.Voice, providers.Settings{Providers: []providers.Provider{voiceP}})
	put(channels.Etn, providers.Settings{Providers: etnP, MaxConcurrentCalls: 2})
	put(channels.Push, providers.Settings{Providers: pushP})
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

// directoryUser creates a user of directory staff with an email and a
// phone, and runs more (devices, fax numbers) on its path.
func directoryUser(t *testing.T, s *stacktest.Stack, tenant, tok string, p *apiPerson, apps []map[string]any, more ...func(base string)) {
	t.Helper()
	body := map[string]any{"name": map[string]any{"first": p.First, "last": "Test"}}
	if apps != nil {
		body["mobileApps"] = apps
	}
	var u struct{ ID string }
	s.Create(t, "/"+tenant+"/directory/staff/users", tok, body).JSON(t, &u)
	id, err := strconv.ParseInt(u.ID, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	p.ID = id
	base := "/" + tenant + "/directory/staff/users/" + u.ID
	s.Create(t, base+"/contact/emails", tok, map[string]any{"address": p.Email})
	s.Create(t, base+"/contact/phones", tok, map[string]any{"number": p.Phone})
	for _, f := range more {
		f(base)
	}
}

// TestOneAlertOnAllThirteenChannels is the acceptance scenario through the
// API alone: people, devices and fax numbers registered with directory
// operations, providers configured with the settings operations (ETN's
// primary unreachable, push's refusing), one Emergency alert on all
// thirteen channels, every provider receiving what the README describes
// with variables filled, and the per-recipient view final when the alert is.
func TestOneAlertOnAllThirteenChannels(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := startWithPublicURL(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	refusing := pushtest.New(t, "push-token")
	refusing.FailWith(http.StatusForbidden)
	l := configureLoopbacks(t, s, tok, refusing)

	ada := &apiPerson{First: "Ada", Phone: "+12025550101", Email: "ada-" + tenant + "@example.com"}
	alan := &apiPerson{First: "Alan", Phone: "+12025550102", Email: "alan-" + tenant + "@example.com"}
	directoryUser(t, s, tenant, tok, ada, []map[string]any{{"installationId": "ios-ada", "platform": "ios", "pushToken": "ada-app-token"}},
		func(base string) {
			for _, dev := range []string{"ada-phone-token", "ada-tablet-token"} {
				if r := s.Do(t, http.MethodPost, base+"/contact/devices", tok, map[string]any{"platform": "ios", "token": dev}); r.Status != http.StatusCreated {
					t.Fatalf("register device: %d %s", r.Status, r.Body)
				}
			}
			if r := s.Do(t, http.MethodPost, base+"/contact/phones", tok, map[string]any{"number": "+12025550109", "type": "Fax"}); r.Status != http.StatusCreated {
				t.Fatalf("add fax number: %d %s", r.Status, r.Body)
			}
		})
	directoryUser(t, s, tenant, tok, alan, nil)

	l.voice.Script(ada.Phone, voicetest.Outcome{Status: "answered", AnsweredBy: "human", Digits: "1"})
	l.voice.Script(alan.Phone, voicetest.Outcome{Status: "busy"})
	alert := map[string]any{"settings": map[string]any{
		"message":  map[string]any{"subject": "Evacuate", "body": "Hello {{firstName}}, leave the building now.", "language": "en-GB"},
		"priority": map[string]any{"priority": "Emergency", "loudTone": map[string]any{"enabled": true, "sound": "Alarm", "durationSeconds": 20}},
		"channels": map[string]any{
			"email":           map[string]any{"enabled": true},
			"text":            map[string]any{"enabled": true},
			"etn":             map[string]any{"enabled": true, "message": "ETN call for {{firstName}} about alert {{alertId}}."},
			"voice":           map[string]any{"enabled": true, "repeat": 2, "pressOneToConfirm": true},
			"push":            map[string]any{"enabled": true, "title": "Evacuate now, {{firstName}}", "loudTone": true},
			"myAlertsApp":     map[string]any{"enabled": true, "body": "App body for {{firstName}}"},
			"fax":             map[string]any{"enabled": true, "coverPage": true},
			"eas":             map[string]any{"enabled": true, "eventCode": "EVI", "sameCodes": []string{"041005"}},
			"mobileBroadcast": map[string]any{"enabled": true, "text": "Evacuate the campus now (alert {{alertId}})."},
			"teamChat":        map[string]any{"enabled": true, "message": "Chat: {{subject}} ({{alertId}})"},
			"socialPostA":     map[string]any{"enabled": true},
			"socialPostB":     map[string]any{"enabled": true},
			"neighborhood":    map[string]any{"enabled": true, "groups": []string{"g2"}},
		},
		// Ada twice: by id and as an ad-hoc entry with her address in
		// another case; she is one recipient.
		"recipients": map[string]any{"contactIds": []int64{ada.ID, alan.ID},
			"adHoc": []map[string]any{{"firstName": "Ada", "lastName": "Test", "email": strings.ToUpper(ada.Email)}}},
	}}
	res := send(t, s, tok, alert)
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Recipients != 2 {
		t.Fatalf("alert status %+v, want Sent to 2 recipients", st)
	}
	alertID := strconv.FormatInt(res.AlertID, 10)

	ctx := context.Background()
	rows := deliveries(t, s, tenant, res.AlertID)
	got := map[string]results.Delivery{}
	for _, r := range rows {
		got[r.Channel+"/"+strings.Split(strings.TrimPrefix(r.Address, "+"), ",")[0]] = r
	}
	want := map[string]string{
		"email/" + ada.Email:        "Sent",
		"email/" + alan.Email:       "Sent",
		"text/12025550101":          "Sent",
		"text/12025550102":          "Sent",
		"push/ada-phone-token":      "Sent",
		"push/":                     "Failed", // Alan has no device
		"myAlertsApp/ada-app-token": "Sent",
		"myAlertsApp/":              "Failed",
		"fax/12025550109":           "Sent",
		"fax/":                      "Failed",
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g.Status != w {
			t.Errorf("%s: got %+v, want %s (all rows %+v)", k, g, w, rows)
		}
	}
	if len(rows) != 14 || got["voice/12025550101"].Status == "" || got["voice/12025550102"].Status == "" ||
		got["etn/12025550101"].Status == "" || got["etn/12025550102"].Status == "" {
		t.Errorf("%d delivery rows, want one per recipient and channel: %+v", len(rows), rows)
	}
	if r := got["push/ada-phone-token"]; r.Address != "ada-phone-token,ada-tablet-token" {
		t.Errorf("push row address %q, want both tokens", r.Address)
	}

	// The results show every channel: per recipient, per destination.
	r0 := s.Do(t, http.MethodGet, "/v2/alerts/"+alertID+"/results", tok, nil)
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

	// What each provider received, variables filled everywhere.
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, c := range []*apiPerson{ada, alan} {
		if m, err := sb.SMTP.WaitTo(ectx, c.Email); err != nil || !strings.Contains(m.Text, "Hello "+c.First) {
			t.Errorf("email to %s: %+v %v", c.First, m, err)
		}
		if m, err := sb.SMS.WaitTo(ectx, c.Phone); err != nil || !strings.Contains(m.Body, "Hello "+c.First) {
			t.Errorf("text to %s: %+v %v", c.First, m, err)
		}
	}
	emailsToAda := 0
	for _, m := range sb.SMTP.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, ada.Email) {
				emailsToAda++
			}
		}
	}
	if emailsToAda != 1 {
		t.Errorf("Ada got %d emails, want one", emailsToAda)
	}
	calls := l.voice.Calls()
	if len(calls) != 4 { // voice and ETN (through the fallback), both recipients
		t.Fatalf("%d calls", len(calls))
	}
	etnCalls := 0
	for _, c := range calls {
		if strings.Contains(c.IdempotencyKey, ":etn:") {
			etnCalls++
			if c.Request.To == ada.Phone && (c.Request.Say == nil || c.Request.Say.Text != "ETN call for Ada about alert "+alertID+".") {
				t.Errorf("ETN call to Ada: %+v", c.Request.Say)
			}
		} else if c.Request.Gather == nil || c.Request.Repeat != 2 {
			t.Errorf("call without press-1 or repeat: %+v", c.Request)
		}
		// Neither block gives a language: the message's is spoken.
		if c.Request.Say == nil || c.Request.Say.Language != "en-GB" {
			t.Errorf("call %s not in the message's language: %+v", c.IdempotencyKey, c.Request.Say)
		}
	}
	if etnCalls != 2 {
		t.Errorf("%d ETN calls reached the fallback provider, want 2", etnCalls)
	}
	pushes := l.push.Received()
	if len(pushes) != 2 {
		t.Fatalf("push notifications at the fallback %+v", pushes)
	}
	for _, n := range pushes {
		if n.Title != "Evacuate now, Ada" || n.InterruptionLevel != "critical" || !strings.Contains(n.Body, "Hello Ada") {
			t.Errorf("push notification %+v", n)
		}
		// The priority's tone: its sound file, for its seconds.
		if snd, ok := n.Sound.(push.CriticalSound); !ok || snd.Name != "alarm.caf" || n.Data[push.DataLoudToneSeconds] != "20" {
			t.Errorf("push notification's tone: %+v, data %v", n.Sound, n.Data)
		}
	}
	if a := l.app.Received(); len(a) != 1 || a[0].To != "ada-app-token" || a[0].Body != "App body for Ada" {
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
		if doc := string(d); strings.Contains(doc, "{{") {
			t.Errorf("CAP document with an unfilled variable: %s", doc)
		} else if strings.Contains(doc, "CMAM") && !strings.Contains(doc, "Evacuate the campus now (alert "+alertID+").") {
			t.Errorf("mobile broadcast text: %s", doc)
		}
	}
	posts := l.chat.Posts()
	if len(posts) != 2 {
		t.Errorf("chat posts %+v", posts)
	}
	for _, p := range posts {
		j, _ := json.Marshal(p)
		if b := string(j); strings.Contains(b, "{{") || !strings.Contains(b, "Chat: Evacuate ("+alertID+")") {
			t.Errorf("chat post %s", b)
		}
	}
	if p := l.social.Posts(); len(p) != 2 {
		t.Errorf("social posts %+v", p)
	}
	if p := l.neighborhood.Posts(); len(p) != 1 {
		t.Errorf("neighborhood posts %+v", p)
	}
	l.checkProblems(t)

	// Each recipient's view: every channel final, the broadcast ones by
	// their shared deliveries.
	for seq := 1; seq <= 2; seq++ {
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%s/results/recipients/%d", alertID, seq), tok, nil)
		var view struct {
			Channels []struct {
				Channel, Status string
				Deliveries      []struct{ Status string }
			}
		}
		r.JSON(t, &view)
		if r.Status != 200 || len(view.Channels) != 13 {
			t.Fatalf("recipient %d: %d %s", seq, r.Status, r.Body)
		}
		for _, c := range view.Channels {
			if c.Status == "Pending" || c.Status == "Retrying" || len(c.Deliveries) == 0 {
				t.Errorf("recipient %d, %s: %+v, want final deliveries", seq, c.Channel, c)
			}
		}
	}

	// The calls' status callbacks are receipts: Ada answered and pressed 1
	// (delivered and confirmed), Alan's line was busy (failed).
	stacktest.Eventually(t, 60*time.Second, "the call statuses to reach the deliveries", func() bool {
		store := results.New(s.DB)
		recipients, _, err := store.Recipients(ctx, results.RecipientFilter{Tenant: tenant, AlertID: res.AlertID}, "r.seq", 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range recipients {
			ds, err := store.RecipientDeliveries(ctx, tenant, res.AlertID, r.Seq)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if d.Channel != "voice" || r.PersonID == nil {
					continue
				}
				if (*r.PersonID == ada.ID && d.Status == "Delivered" && r.ConfirmedAt != nil) || (*r.PersonID == alan.ID && d.Status == "Failed") {
					n++
				}
			}
		}
		return n == 2
	})
	r := s.Do(t, http.MethodGet, "/v2/alerts/"+alertID+"/results/channels/voice", tok, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"confirmed":true`) {
		t.Errorf("voice results %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodGet, "/v2/alerts/"+alertID+"/results/channels/etn", tok, nil)
	var etnPage struct {
		Items []struct{ Phone, Status string }
	}
	r.JSON(t, &etnPage)
	if r.Status != 200 || len(etnPage.Items) != 2 {
		t.Errorf("ETN page lists %d calls: %d %s", len(etnPage.Items), r.Status, r.Body)
	}

	// The neighborhood page: one row per account and group posted to.
	r = s.Do(t, http.MethodGet, "/v2/alerts/"+alertID+"/results/channels/social/neighborhood", tok, nil)
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
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	inside := &contact{First: "In", Last: "Side", Phone: "+15550200001", HasLocation: true, Lat: 41.8781, Lng: -87.6298}
	outside := &contact{First: "Out", Last: "Side", Phone: "+15550200002", HasLocation: true, Lat: 40.0, Lng: -80.0}
	seed(t, s, tenant, inside, outside)
	csv := "phone,latitude,longitude,name\n+15550300001,41.8790,-87.6300,Well 1\n+15550300002,45.0,-90.0,Far well\n"
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status/100 != 2 {
		t.Fatalf("import points %d %s", r.Status, r.Body)
	}
	l.voice.Script("+15550300001", voicetest.Outcome{Status: "no-answer"})
	alert := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 2000}}},
	}}
	// The preview and the alert count the numbers it calls: the contact and
	// the well inside the area, not the one recipient with a phone.
	if v := previewOf(t, s, tok, alert); v.Recipients.String() != "total=1 adHoc=0 etn=2" || v.messageCounts() != "etn=2" {
		t.Errorf("preview counts %s, messages %s", v.Recipients, v.messageCounts())
	}
	res := send(t, s, tok, alert)
	st := waitDone(t, s, tok, res.AlertID)
	if v := alertOf(t, s, tok, res.AlertID); v.Recipients.String() != "total=1 adHoc=0 etn=2" {
		t.Errorf("alert counts %s", v.Recipients)
	}
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

// TestEtnResultsCountEveryCall: the ETN results of an area alert that
// calls more numbers than a page holds show, on every page and in the
// alert's results, the calls' totals by status that its pages list, and
// the alert counts the numbers on etn. The totals are kept with the calls
// rather than counted for each read, and must follow every call's status.
func TestEtnResultsCountEveryCall(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	_, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	const wells, pageSize = 24, 10
	csv := "phone,latitude,longitude,name\n"
	for i := 1; i <= wells; i++ {
		phone := fmt.Sprintf("+1555040%04d", i)
		csv += fmt.Sprintf("%s,%.4f,-87.6298,Well %d\n", phone, 41.8781+float64(i)*0.0001, i)
		if i%3 == 0 {
			l.voice.Script(phone, voicetest.Outcome{Status: "no-answer"})
		}
	}
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status/100 != 2 {
		t.Fatalf("import points %d %s", r.Status, r.Body)
	}
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 5000}}},
	}})
	waitDone(t, s, tok, res.AlertID)
	type totals struct{ Total, Pending, Retrying, Sent, Delivered, Failed int64 }
	type page struct {
		TotalCount      int64 `json:"totalCount"`
		TotalPages      int64 `json:"totalPages"`
		TotalCountExact bool  `json:"totalCountExact"`
		Totals          totals
		Items           []struct{ Status string }
	}
	read := func(n int) page {
		t.Helper()
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/etn?page=%d&pageSize=%d", res.AlertID, n, pageSize), tok, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("etn page %d: %d %s", n, r.Status, r.Body)
		}
		var p page
		r.JSON(t, &p)
		return p
	}
	want := totals{Total: wells, Delivered: wells - wells/3, Failed: wells / 3}
	stacktest.Eventually(t, 60*time.Second, "every call to end", func() bool { return read(1).Totals == want })
	var listed totals
	for n := 1; n <= 3; n++ {
		p := read(n)
		if p.TotalCount != wells || p.TotalPages != 3 || !p.TotalCountExact || p.Totals != want {
			t.Errorf("page %d: %d items of %d in %d pages (exact %v), totals %+v; want %+v", n, len(p.Items), p.TotalCount, p.TotalPages, p.TotalCountExact, p.Totals, want)
		}
		for _, it := range p.Items {
			listed.Total++
			switch it.Status {
			case "Delivered":
				listed.Delivered++
			case "Failed":
				listed.Failed++
			default:
				t.Errorf("page %d lists a call %s", n, it.Status)
			}
		}
	}
	if listed != want {
		t.Errorf("the pages list %+v, their totals say %+v", listed, want)
	}
	var results struct {
		Channels []struct {
			Channel string
			totals
		}
	}
	s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results", res.AlertID), tok, nil).JSON(t, &results)
	if len(results.Channels) != 1 || results.Channels[0].Channel != "etn" || results.Channels[0].totals != want {
		t.Errorf("results %+v, want etn %+v", results.Channels, want)
	}
	if v := alertOf(t, s, tok, res.AlertID); v.Recipients.String() != fmt.Sprintf("total=0 adHoc=0 etn=%d", wells) {
		t.Errorf("alert counts %s", v.Recipients)
	}
	l.checkProblems(t)
}

// TestEtnLeavesOutTheHoleOfItsArea: an ETN alert whose area is a polygon
// with a hole calls, as it selects contacts, only what is inside the
// polygon and outside the hole: the contact and the address point in the
// hole are neither called nor counted, by the preview, the alert or its
// ETN results.
func TestEtnLeavesOutTheHoleOfItsArea(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	ring := &contact{First: "In", Last: "Ring", Phone: "+15550210001", HasLocation: true, Lat: 41.80, Lng: -87.70}
	hole := &contact{First: "In", Last: "Hole", Phone: "+15550210002", HasLocation: true, Lat: 41.85, Lng: -87.65}
	seed(t, s, tenant, ring, hole)
	csv := "phone,latitude,longitude,name\n+15550310001,41.81,-87.69,Ring well\n+15550310002,41.851,-87.651,Hole well\n"
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status/100 != 2 {
		t.Fatalf("import points %d %s", r.Status, r.Body)
	}
	polygon := [][][2]float64{
		{{-87.8, 41.7}, {-87.5, 41.7}, {-87.5, 42.0}, {-87.8, 42.0}, {-87.8, 41.7}},
		{{-87.66, 41.84}, {-87.64, 41.84}, {-87.64, 41.86}, {-87.66, 41.86}, {-87.66, 41.84}},
	}
	alert := map[string]any{"settings": map[string]any{
		"message":  map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels": map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}}},
		"recipients": map[string]any{"areas": []map[string]any{{"geometry": map[string]any{"type": "FeatureCollection",
			"features": []map[string]any{{"type": "Feature", "geometry": map[string]any{"type": "Polygon", "coordinates": polygon}}}}}}},
	}}
	const counts = "total=1 adHoc=0 etn=2"
	if v := previewOf(t, s, tok, alert); v.Recipients.String() != counts || v.messageCounts() != "etn=2" {
		t.Errorf("preview counts %s, messages %s, want %s", v.Recipients, v.messageCounts(), counts)
	}
	res := send(t, s, tok, alert)
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" {
		t.Fatalf("alert status %+v", st)
	}
	if v := alertOf(t, s, tok, res.AlertID); v.Recipients.String() != counts {
		t.Errorf("alert counts %s, want %s", v.Recipients, counts)
	}
	var page struct {
		Totals struct{ Total int64 }
		Items  []struct{ Phone string }
	}
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/etn", res.AlertID), tok, nil)
	r.JSON(t, &page)
	var phones []string
	for _, it := range page.Items {
		phones = append(phones, it.Phone)
	}
	if page.Totals.Total != 2 || !slices.Equal(phones, []string{ring.Phone, "+15550310001"}) {
		t.Errorf("etn results %s, want the contact and the well outside the hole", r.Body)
	}
	var called []string
	for _, c := range l.voice.Calls() {
		called = append(called, c.Request.To)
	}
	slices.Sort(called)
	if !slices.Equal(called, []string{ring.Phone, "+15550310001"}) {
		t.Errorf("called %v, want the contact and the well outside the hole", called)
	}
}

// TestUnknownAddressPointListsAreRefused: an ETN address-point list that
// the tenant has not imported (another tenant's of that name does not
// count) is a 400 naming it, when the alert is made or previewed, enabled
// block or not, instead of an alert that calls none of its points.
func TestUnknownAddressPointListsAreRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	_, other := s.NewTenant(t)
	csv := "phone,latitude,longitude,name\n+15550300001,41.8790,-87.6300,Well 1\n"
	for _, imp := range []struct{ tok, list string }{{tok, "wells"}, {other, "pumps"}} {
		if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/"+imp.list, imp.tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status != http.StatusOK {
			t.Fatalf("import %s: %d %s", imp.list, r.Status, r.Body)
		}
	}
	alertWith := func(channels map[string]any) map[string]any {
		return map[string]any{"settings": map[string]any{
			"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
			"channels":   channels,
			"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 2000}}},
		}}
	}
	lists := []string{"wells", "pumps", "nope"}
	for _, channels := range []map[string]any{
		{"etn": map[string]any{"enabled": true, "addressPointLists": lists}},
		{"text": map[string]any{"enabled": true}, "etn": map[string]any{"enabled": false, "addressPointLists": lists}},
	} {
		for _, path := range []string{"/v2/alerts", "/v2/alerts/preview"} {
			r := s.Do(t, http.MethodPost, path, tok, alertWith(channels))
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%s %v: %d %s", path, channels, r.Status, r.Body)
			}
			var at []string
			for _, f := range problem(t, r).Errors {
				at = append(at, f.Location)
			}
			for i := range 3 {
				refused := slices.Contains(at, fmt.Sprintf("body.settings.channels.etn.addressPointLists[%d]", i))
				if refused != (i > 0) {
					t.Errorf("%s %v: list %s refused %v: %s", path, channels, lists[i], refused, r.Body)
				}
			}
			expectFailure(t, problem(t, r).Errors, "body.settings.channels.etn.addressPointLists[2]", "PUT /v2/settings/etn/addressPointLists/{name} imports one", r.Body)
		}
	}
	if n := alertCount(t, s, tok); n != 0 {
		t.Fatalf("refused alerts left %d alerts", n)
	}
	if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, alertWith(map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}}})); r.Status != http.StatusOK {
		t.Fatalf("preview with an imported list: %d %s", r.Status, r.Body)
	}
}

// TestEtnCountOfAnEndedAlertIsWhatItCalled: an ETN alert with areas that
// ended without a number inside them counts 0 on etn afterwards, however
// many numbers its areas hold by now.
func TestEtnCountOfAnEndedAlertIsWhatItCalled(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	_, tok := s.NewTenant(t)
	configureLoopbacks(t, s, tok, nil)
	importWells := func(csv string) {
		t.Helper()
		if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status/100 != 2 {
			t.Fatalf("import points %d %s", r.Status, r.Body)
		}
	}
	importWells("phone,latitude,longitude,name\n+15550300009,45.0,-90.0,Far well\n")
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 2000}}},
	}})
	waitDone(t, s, tok, res.AlertID)
	importWells("phone,latitude,longitude,name\n+15550300010,41.8790,-87.6300,Near well\n")
	if v := alertOf(t, s, tok, res.AlertID); v.Recipients.String() != "total=0 adHoc=0 etn=0" {
		t.Errorf("alert counts %s, want what it called", v.Recipients)
	}
}

// TestCapCancelReferencesTheAlertsMessages cancels an Emergency alert sent
// on EAS and mobile broadcast: each endpoint gets a Cancel that references
// the message it got before, valid against the CAP 1.2 schema, sent on the
// urgent lane as the alert was.
func TestCapCancelReferencesTheAlertsMessages(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	ada := &contact{First: "Ada", Last: "Lovelace", Phone: "+15550100001"}
	seed(t, s, tenant, ada)
	plain := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "A drill."},
		"channels":   map[string]any{"teamChat": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}})
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":  map[string]any{"subject": "Evacuate", "body": "Leave now."},
		"priority": map[string]any{"priority": "Emergency"},
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
		Sequence   int
		Channels   []string
		WorkflowID string
	}
	r.JSON(t, &out)
	if out.Sequence != 1 || len(out.Channels) != 2 {
		t.Errorf("cancel response %s", r.Body)
	}
	// The cancel of an Emergency alert does not wait for a slot that
	// NonEmergency deliveries hold: it runs on the urgent lane, urgent, with
	// its tenant as the fairness key.
	desc, err := s.Temporal.DescribeWorkflowExecution(context.Background(), out.WorkflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	if q, p := desc.GetExecutionConfig().GetTaskQueue().GetName(), desc.GetWorkflowExecutionInfo().GetPriority(); q != workflows.UrgentQueue(s.Config.TemporalTaskQueue) ||
		p.GetPriorityKey() != storage.PriorityUrgent || p.GetFairnessKey() != tenant {
		t.Errorf("the cancel runs on %s with priority %v", q, p)
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
	// The documents reach the loopback before the activity records them.
	refs := func() (ok int) {
		capChannels, err := results.New(s.DB).CapChannels(context.Background(), tenant, res.AlertID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range capChannels {
			msgs, err := (&channelstate.CAPMessages{DB: s.DB}).ForAlert(context.Background(), tenant, res.AlertID, ch)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range msgs {
				if c.MsgType != "Cancel" {
					continue
				}
				for _, o := range msgs {
					if o.MsgType == "Alert" && strings.Contains(c.Refs, o.Identifier) {
						ok++
						break
					}
				}
			}
		}
		return ok
	}
	stacktest.Eventually(t, 30*time.Second, "each cancel recorded, referencing its channel's alert message", func() bool { return refs() == 2 })
	l.checkProblems(t)
}

// TestBusyCallIsRedialled: a busy line is called again after redialSeconds
// (the SendAlert workflow's redial step) and its answer is the receipt.
func TestBusyCallIsRedialled(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	alan := &contact{First: "Alan", Last: "Turing", Phone: "+15550100002"}
	seed(t, s, tenant, alan)
	// The busy outcome comes seconds after the call was placed, as it does
	// from a carrier: the redial must not depend on it coming first.
	l.voice.Script(alan.Phone, voicetest.Outcome{Status: "busy", Hold: 3 * time.Second}, voicetest.Outcome{Status: "answered", AnsweredBy: "human"})
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "This is a drill."},
		"channels":   map[string]any{"voice": map[string]any{"enabled": true, "callAttempts": 2, "redialSeconds": 30}},
		"recipients": map[string]any{"contactIds": []int64{alan.ID}},
	}})
	stacktest.Eventually(t, 90*time.Second, "the redialled call to be answered", func() bool {
		for _, d := range deliveries(t, s, tenant, res.AlertID) {
			if d.Channel == "voice" {
				return d.Status == "Delivered"
			}
		}
		return false
	})
	if n := len(l.voice.Calls()); n != 2 {
		t.Errorf("%d calls, want the busy one and the redial", n)
	}
	l.checkProblems(t)
}

// TestEtnWithoutAreasCallsEveryTime sends ETN alerts without areas one
// after another and two at once: every one calls each recipient's phone
// and lists the calls on its ETN page.
func TestEtnWithoutAreasCallsEveryTime(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, pushtest.New(t, "push-token"))
	ada := &apiPerson{First: "Ada", Phone: "+12025550111", Email: "ada-" + tenant + "@example.com"}
	alan := &apiPerson{First: "Alan", Phone: "+12025550112", Email: "alan-" + tenant + "@example.com"}
	directoryUser(t, s, tenant, tok, ada, nil)
	directoryUser(t, s, tenant, tok, alan, nil)
	alert := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Boil water", "body": "Boil water before drinking, {{firstName}}."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID, alan.ID}},
	}}
	check := func(id int64) {
		t.Helper()
		var st alertStatus
		deadline := time.Now().Add(60 * time.Second)
		for st = status(t, s, tok, id); !st.Completed && time.Now().Before(deadline); st = status(t, s, tok, id) {
			time.Sleep(500 * time.Millisecond)
		}
		if !st.Completed {
			t.Fatalf("alert %d not complete: %+v rows %+v voice %d", id, st, deliveries(t, s, tenant, id), len(l.voice.Calls()))
		}
		if st.Status != "Sent" {
			t.Errorf("alert %d: %+v", id, st)
		}
		var page struct {
			Items []struct{ Phone, Status string }
		}
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/etn", id), tok, nil)
		r.JSON(t, &page)
		if r.Status != 200 || len(page.Items) != 2 {
			t.Errorf("alert %d: ETN page %d %s", id, r.Status, r.Body)
		}
		for _, it := range page.Items {
			if it.Status != "Sent" && it.Status != "Delivered" {
				t.Errorf("alert %d: ETN call %+v", id, it)
			}
		}
	}
	var sent []sendResponse
	for range 2 {
		res := send(t, s, tok, alert)
		check(res.AlertID)
		sent = append(sent, res)
	}
	a, b := send(t, s, tok, alert), send(t, s, tok, alert)
	check(a.AlertID)
	check(b.AlertID)
	sent = append(sent, a, b)
	calls := map[string]int{}
	for _, c := range l.voice.Calls() {
		calls[strings.SplitN(c.IdempotencyKey, ":", 2)[0]]++
	}
	// A delivery key begins with its alert's workflow id.
	for _, res := range sent {
		if n := calls[res.WorkflowID]; n != 2 {
			t.Errorf("alert %d made %d calls, want 2", res.AlertID, n)
		}
	}
	l.checkProblems(t)
}

// wavTone is one second of a 440 Hz tone as 16-bit mono WAV.
func wavTone(t *testing.T) []byte {
	t.Helper()
	const rate = 16000
	data := make([]byte, 0, rate*2)
	for i := range rate {
		v := int16(12000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
	}
	return wav(data)
}

// wav is a WAV file of data, 16-bit mono samples at 16 kHz.
func wav(data []byte) []byte {
	const rate = 16000
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+len(data)))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate * 2), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

// TestAudioFileByFullOrShortName names a stored audio file in voice and EAS
// blocks by its full name (folder/name) and by its name alone: the call
// plays its voice version and the CAP document embeds its EAS version.
func TestAudioFileByFullOrShortName(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, pushtest.New(t, "push-token"))
	ada := &apiPerson{First: "Ada", Phone: "+12025550121", Email: "ada-" + tenant + "@example.com"}
	directoryUser(t, s, tenant, tok, ada, nil)

	w := wavTone(t)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range map[string]string{"FileName": "eas-siren.wav", "FolderName": "sirens", "ContentType": "audio/wav",
		"ContentLength": strconv.Itoa(len(w)), "EncodeForVoiceAudio": "true", "EncodeForEasAudio": "true"} {
		_ = mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("HttpFile", "eas-siren.wav")
	_, _ = fw.Write(w)
	_ = mw.Close()
	if r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/files", tok, &b, "Content-Type", mw.FormDataContentType()); r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	for i, name := range []string{"sirens/eas-siren.wav", "eas-siren.wav"} {
		res := send(t, s, tok, map[string]any{"settings": map[string]any{
			"message": map[string]any{"subject": "Siren test", "body": "This is a siren test."},
			"channels": map[string]any{
				"voice": map[string]any{"enabled": true, "audioFileName": name},
				"eas":   map[string]any{"enabled": true, "eventCode": "RWT", "audioFileName": name},
			},
			"recipients": map[string]any{"contactIds": []int64{ada.ID}},
		}})
		if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" {
			t.Fatalf("%s: alert %+v", name, st)
		}
		rows := deliveries(t, s, tenant, res.AlertID)
		if len(rows) != 1 || rows[0].Status == "Failed" {
			t.Errorf("%s: voice deliveries %+v", name, rows)
		}
		calls := l.voice.Calls()
		if len(calls) != i+1 || calls[i].Request.Play == nil || calls[i].Request.Play.URL == "" || calls[i].Request.Say != nil {
			t.Errorf("%s: call %+v", name, calls)
		} else if !strings.Contains(calls[i].Request.Play.URL, "/voice") && !strings.Contains(calls[i].Request.Play.URL, "voice") {
			t.Errorf("%s: the call plays %s, not the voice version", name, calls[i].Request.Play.URL)
		}
		docs := l.cap.Documents()
		if len(docs) != i+1 || !strings.Contains(string(docs[i]), "<resourceDesc>EAS Broadcast Content</resourceDesc>") ||
			!strings.Contains(string(docs[i]), "<derefUri>") {
			t.Errorf("%s: %d CAP documents, the last without the EAS audio", name, len(docs))
		}
	}
	l.checkProblems(t)
}

// TestAreaAlertWithoutRecipientsStillBroadcastsAndCalls sends an alert to an
// area where no contact lives: its EAS message still goes out and ETN still
// calls the imported address point inside the area, so the alert is Sent
// with no recipients rather than Failed.
func TestAreaAlertWithoutRecipientsStillBroadcastsAndCalls(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	_, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	csv := "phone,latitude,longitude,name\n+12025550177,44.0001,-121.0,Remote well\n+12025550178,46.0,-121.0,Far well\n"
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(csv), "Content-Type", "text/csv"); r.Status != http.StatusOK {
		t.Fatalf("import points: %d %s", r.Status, r.Body)
	}
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Wildfire", "body": "Evacuate the valley now."},
		"channels": map[string]any{
			"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells"}},
			"eas": map[string]any{"enabled": true, "eventCode": "EVI", "sameCodes": []string{"041005"}},
		},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 44, "lng": -121}, "radiusMeters": 500}}},
	}})
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Recipients != 0 {
		t.Fatalf("status %s with %d recipients, want Sent with 0", st.Status, st.Recipients)
	}
	if docs := l.cap.Documents(); len(docs) != 1 {
		t.Errorf("%d EAS documents, want 1", len(docs))
	}
	var called []string
	for _, c := range l.voice.Calls() {
		called = append(called, c.Request.To)
	}
	if len(called) != 1 || called[0] != "+12025550177" {
		t.Errorf("ETN called %v, want only the point inside the area", called)
	}
}

// TestPreviewEtnCountIsBounded: counting the numbers inside an ETN alert's
// areas stops after channelstate.ETNCountTimeout; the preview then answers
// a 503 problem saying the count took too long (here the address points
// are locked, as a count over a very large list runs long), not a 500 and
// not a request that hangs.
func TestPreviewEtnCountIsBounded(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	tenant, tok := s.NewTenant(t)
	ada := &contact{First: "Ada", Last: "Lovelace", Phone: "+15550100001"}
	seed(t, s, tenant, ada)
	lock, err := storagetest.LockAddressPoints(context.Background(), s.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Rollback() })
	// Without the bound, the preview would wait for the lock: end it in
	// time for the test to say so.
	time.AfterFunc(3*channelstate.ETNCountTimeout, func() { _ = lock.Rollback() })
	started := time.Now()
	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 2000}}},
	}})
	took := time.Since(started)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" ||
		!strings.Contains(problem(t, r).Detail, "took longer than "+channelstate.ETNCountTimeout.String()) {
		t.Fatalf("preview while the count cannot finish: %d %s after %s", r.Status, r.Body, took)
	}
	if took >= 3*channelstate.ETNCountTimeout {
		t.Fatalf("the preview answered after %s", took)
	}
}

// TestAlertReadOutlivesItsEtnCount: getAlertsById of an ETN alert whose
// first batch has not stored its numbers counts the numbers inside its
// areas; when that count runs past channelstate.ETNCountTimeout the alert
// is still answered, without its recipient summary, not refused.
func TestAlertReadOutlivesItsEtnCount(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	tenant, tok := s.NewTenant(t)
	configureLoopbacks(t, s, tok, nil)
	ada := &contact{First: "Ada", Last: "Lovelace", Phone: "+15550100001", Lat: 41.8781, Lng: -87.6298, HasLocation: true}
	seed(t, s, tenant, ada)
	lock, err := storagetest.LockAddressPoints(context.Background(), s.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Rollback() })
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Gas leak", "body": "Leave the area now."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 41.8781, "lng": -87.6298}, "radiusMeters": 2000}}},
	}})
	// The recipients resolve; the batch that stores the numbers waits for
	// the address points, so reading the alert counts them, in vain.
	stacktest.Eventually(t, 60*time.Second, "the recipients to resolve", func() bool {
		return status(t, s, tok, res.AlertID).Recipients > 0
	})
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d", res.AlertID), tok, nil)
	var got struct {
		ID         int64           `json:"id"`
		Recipients json.RawMessage `json:"recipients"`
	}
	if r.Status != http.StatusOK {
		t.Fatalf("reading the alert while its ETN count cannot finish: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &got)
	if got.ID != res.AlertID || got.Recipients != nil {
		t.Errorf("alert %d with recipients %s, want %d without", got.ID, got.Recipients, res.AlertID)
	}
	_ = lock.Rollback()
	waitDone(t, s, tok, res.AlertID)
}
