package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/etn/etntest"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/stacktest"
)

func voiceSettings(url string) map[string]any {
	return map[string]any{
		"providers": []map[string]any{
			{"name": "primary", "url": url, "token": "voice-api-token-123456", "signingSecret": "callback-signing-secret", "from": "+15550001000"},
			{"name": "backup", "url": url + "/backup", "token": "backup-token-abcdefgh", "signingSecret": "backup-signing-secret-x", "from": "+15550001001"},
		},
		"ratePerSecond": 20,
	}
}

func TestChannelSettingsOperations(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, voiceSettings("https://voice.example/v1"))
	if r.Status != 200 {
		t.Fatalf("put %d %s", r.Status, r.Body)
	}
	if bytes.Contains(r.Body, []byte("voice-api-token-123456")) || bytes.Contains(r.Body, []byte("callback-signing-secret")) {
		t.Fatalf("a secret came back: %s", r.Body)
	}
	var got model.ChannelProviderSettingsResponse
	r.JSON(t, &got)
	if got.Channel != "voice" || got.Settings.Providers[0].Token != "****3456" || got.Settings.Providers[1].From != "+15550001001" || got.Settings.RatePerSecond != 20 {
		t.Fatalf("%+v", got)
	}
	// Sending back what was read changes nothing secret.
	got.Settings.RatePerSecond = 5
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, got.Settings); r.Status != 200 {
		t.Fatalf("put back %d %s", r.Status, r.Body)
	}
	st := &providers.Store{DB: s.DB, Box: mustBox(t)}
	e, err := st.Get(context.Background(), tenant, channels.Voice)
	if err != nil || e.Settings.Providers[0].Token != "voice-api-token-123456" || e.Settings.RatePerSecond != 5 {
		t.Fatalf("%+v %v", e, err)
	}

	cases := []struct {
		name, method, path, token string
		body                      any
		want                      int
		field                     string
	}{
		{"get", http.MethodGet, "/v2/settings/channels/voice", tok, nil, 200, ""},
		{"list", http.MethodGet, "/v2/settings/channels", tok, nil, 200, ""},
		{"not configured", http.MethodGet, "/v2/settings/channels/fax", tok, nil, 404, ""},
		{"another tenant", http.MethodGet, "/v2/settings/channels/voice", s.Token(t, stacktest.NewTenant()), nil, 404, ""},
		{"unknown channel", http.MethodGet, "/v2/settings/channels/pager", tok, nil, 400, ""},
		{"email is not configured here", http.MethodPut, "/v2/settings/channels/email", tok, voiceSettings("https://x"), 400, ""},
		{"missing scope", http.MethodGet, "/v2/settings/channels/voice", s.Token(t, tenant, auth.ScopeContent), nil, 403, ""},
		{"bad caller id", http.MethodPut, "/v2/settings/channels/etn", tok, map[string]any{"providers": []map[string]any{{"url": "https://v", "token": "t", "signingSecret": "0123456789abcdefgh", "from": "555"}}}, 400, "providers[0].from"},
		{"masked secret matching nothing", http.MethodPut, "/v2/settings/channels/push", tok, map[string]any{"providers": []map[string]any{{"url": "https://p", "token": "****abcd"}}}, 400, "providers[0].token"},
		{"team chat", http.MethodPut, "/v2/settings/channels/teamChat", tok, map[string]any{"targets": []map[string]any{{"name": "ops", "url": "https://hooks.example/services/x/y/z", "style": "teams"}}}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, c.method, c.path, c.token, c.body)
			if r.Status != c.want {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if c.field != "" && !strings.Contains(string(r.Body), `"propertyName":"`+c.field+`"`) {
				t.Fatalf("the problem does not name %s: %s", c.field, r.Body)
			}
		})
	}
	var list model.ChannelProviderSettingsList
	s.Do(t, http.MethodGet, "/v2/settings/channels", tok, nil).JSON(t, &list)
	if len(list.Items) != 2 || list.Items[0].Channel != "teamChat" || list.Items[1].Channel != "voice" {
		t.Fatalf("%+v", list)
	}
	if r := s.Do(t, http.MethodDelete, "/v2/settings/channels/voice", tok, nil); r.Status != 204 {
		t.Fatalf("delete %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, "/v2/settings/channels/voice", tok, nil); r.Status != 404 {
		t.Fatalf("second delete %d", r.Status)
	}
}

// TestProviderHostsMustBeNames: a provider or webhook URL whose host is
// neither an IP address nor a valid DNS name is refused when saved, on
// every configurable channel, with a 400 problem naming the URL's field;
// an internationalized name is kept in the ASCII form it is dialed in.
func TestProviderHostsMustBeNames(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	provider := func(u string) map[string]any {
		return map[string]any{"url": u, "token": "provider-token-1234", "signingSecret": "callback-signing-secret", "from": "+15550001000"}
	}
	account := []map[string]any{{"id": "a", "name": "A", "token": "account-token-1234", "groups": []map[string]any{{"id": "g", "name": "G"}}}}
	bodyFor := func(ch, u string) map[string]any {
		switch ch {
		case "teamChat":
			return map[string]any{"targets": []map[string]any{{"name": "ops", "url": u, "style": "slack"}}}
		case "neighborhood":
			return map[string]any{"providers": []map[string]any{provider(u)}, "accounts": account}
		case "socialPostA", "socialPostB":
			return map[string]any{"providers": []map[string]any{provider(u)}, "accounts": []map[string]any{{"id": "a", "name": "A", "token": "account-token-1234"}}}
		}
		return map[string]any{"providers": []map[string]any{provider(u)}}
	}
	hosts := []struct{ url, says string }{
		{"https://./v1", "not a name"},
		{"https://provider.example../v1", "empty label"},
		{"https://provider.example:/v1", "port"},
		{"https://ｐrovider.example/v1", "reads as provider.example"},
		{"https://" + strings.Repeat("p", 64) + ".example/v1", "longer than 63"},
		{"https://" + strings.Repeat(strings.Repeat("p", 62)+".", 4) + "pp/v1", "longer than 253"},
		{"https://pro*vider.example/v1", "other than letters"},
		{"https://-provider.example/v1", "hyphen"},
		{"https://provider-.example/v1", "hyphen"},
	}
	for _, ch := range providers.Configurable {
		field := "providers[0].url"
		if ch == channels.TeamChat {
			field = "targets[0].url"
		}
		for _, h := range hosts {
			r := s.Do(t, http.MethodPut, "/v2/settings/channels/"+string(ch), tok, bodyFor(string(ch), h.url))
			if r.Status != 400 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") ||
				!strings.Contains(string(r.Body), `"propertyName":"`+field+`"`) || !strings.Contains(string(r.Body), `"location":"body.`+field+`"`) ||
				!strings.Contains(string(r.Body), h.says) {
				t.Errorf("%s %s: %d %s %s, want a 400 problem at %s saying %q", ch, h.url, r.Status, r.Header.Get("Content-Type"), r.Body, field, h.says)
			}
		}
	}
	for _, u := range []string{"https://push.example./v1", "https://push.example:8443/v1", "https://[2606:4700:4700::1111]:8443/v1", "https://bücher.example/v1?key=k"} {
		if r := s.Do(t, http.MethodPut, "/v2/settings/channels/push", tok, bodyFor("push", u)); r.Status != 200 {
			t.Errorf("%s: %d %s", u, r.Status, r.Body)
		}
	}
	e, err := (&providers.Store{DB: s.DB, Box: mustBox(t)}).Get(context.Background(), tenant, channels.Push)
	if err != nil || e.Settings.Providers[0].URL != "https://xn--bcher-kva.example/v1?key=k" {
		t.Fatalf("stored %+v %v, want the internationalized name in ASCII", e.Settings.Providers, err)
	}
}

// Provider and webhook URLs may carry credentials in the path, matrix
// parameters, the query (a bare key too) or the fragment: answers mask each
// of those parts, a masked URL sent back keeps the stored one (and the
// secrets that go with it), and a masked URL never stands for another
// destination.
func TestProviderURLsAreAnsweredMaskedAndKeptWhenSentBack(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	st := &providers.Store{DB: s.DB, Box: mustBox(t)}
	stored := func(ch channels.Channel) providers.Settings {
		t.Helper()
		e, err := st.Get(context.Background(), tenant, ch)
		if err != nil {
			t.Fatal(err)
		}
		return e.Settings
	}
	for _, c := range []struct {
		channel, real, masked, field string
		settings                     func(url string) map[string]any
	}{
		{
			channel: "push", field: "providers[0].url",
			real:   "https://push.example/v1/path-secret-A1B2/send;sig=matrix-secret-C3D4?bare-secret-E5F6&api_key=query-secret-G7H8&region=eu#frag-secret-I9J0",
			masked: "https://push.example/****/****A1B2/****C3D4?****E5F6&api_key=****G7H8&region=****#****I9J0",
			settings: func(url string) map[string]any {
				return map[string]any{"providers": []map[string]any{{"url": url, "token": "push-token-abcdefgh"}}}
			},
		},
		{
			// A key given bare, without a name.
			channel: "fax", field: "providers[0].url",
			real:   "https://fax.example/send?sk_live_abc123",
			masked: "https://fax.example/****?****c123",
			settings: func(url string) map[string]any {
				return map[string]any{"providers": []map[string]any{{"url": url, "token": "fax-token-abcdefgh", "from": "+15550001000"}}}
			},
		},
		{
			channel: "teamChat", field: "targets[0].url",
			real:   "https://hooks.chat.example/services/T000/B000/webhook-secret-M3N4?thread=ops-secret-O5P6",
			masked: "https://hooks.chat.example/****/****/****/****M3N4?thread=****O5P6",
			settings: func(url string) map[string]any {
				return map[string]any{"targets": []map[string]any{{"name": "ops", "url": url, "style": "slack"}}}
			},
		},
	} {
		ch := channels.Channel(c.channel)
		path := "/v2/settings/channels/" + c.channel
		put := s.Do(t, http.MethodPut, path, tok, c.settings(c.real))
		if put.Status != 200 {
			t.Fatalf("%s: put %d %s", c.channel, put.Status, put.Body)
		}
		for what, r := range map[string]stacktest.Response{
			"put": put, "get": s.Do(t, http.MethodGet, path, tok, nil), "list": s.Do(t, http.MethodGet, "/v2/settings/channels", tok, nil),
		} {
			if bytes.Contains(r.Body, []byte("secret")) || bytes.Contains(r.Body, []byte("sk_live")) || !bytes.Contains(r.Body, []byte(`"url":"`+c.masked+`"`)) {
				t.Fatalf("%s: %s answers %s, want the url %s", c.channel, what, r.Body, c.masked)
			}
		}
		// What was read, sent back, keeps the stored URL and its token.
		var got model.ChannelProviderSettingsResponse
		s.Do(t, http.MethodGet, path, tok, nil).JSON(t, &got)
		if r := s.Do(t, http.MethodPut, path, tok, got.Settings); r.Status != 200 {
			t.Fatalf("%s: put back %d %s", c.channel, r.Status, r.Body)
		}
		kept := stored(ch)
		if len(kept.Providers) > 0 && (kept.Providers[0].URL != c.real || !strings.HasSuffix(kept.Providers[0].Token, "-token-abcdefgh")) ||
			len(kept.Targets) > 0 && kept.Targets[0].URL != c.real {
			t.Fatalf("%s: stored %+v after putting back what was read", c.channel, kept)
		}
		// The masked URL on another host, or changed in any part, matches
		// nothing stored: refused, naming the URL, and nothing changes.
		for _, moved := range []string{
			strings.Replace(c.masked, "://", "://elsewhere.", 1),
			c.masked + "&more=1",
			strings.Replace(c.masked, "/****", "", 1),
		} {
			r := s.Do(t, http.MethodPut, path, tok, c.settings(moved))
			if r.Status != 400 || !strings.Contains(string(r.Body), `"propertyName":"`+c.field+`"`) || !strings.Contains(string(r.Body), "mask") {
				t.Errorf("%s: masked URL moved to %s: %d %s", c.channel, moved, r.Status, r.Body)
			}
		}
		if u := stored(ch); len(u.Providers) > 0 && u.Providers[0].URL != c.real || len(u.Targets) > 0 && u.Targets[0].URL != c.real {
			t.Fatalf("%s: a refused put changed %+v", c.channel, u)
		}
	}
}

func TestCallStatusCallbacks(t *testing.T) {
	t.Parallel()
	// The provider is a loopback speaking plain http: allowed by the
	// outbound policy, as an operator would allow a private provider.
	s := stacktest.Start(t, func(c *config.Config) { c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true })
	ctx := context.Background()
	tenant, tok := s.NewTenant(t)
	prov := voicetest.New(t, "voice-api-token-123456", "callback-signing-secret")
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, voiceSettings(prov.URL)); r.Status != 200 {
		t.Fatalf("put %d %s", r.Status, r.Body)
	}
	prov.Script("+15550000002", voicetest.Outcome{Status: voice.CallbackAnswered, AnsweredBy: "human", Digits: "1"})
	calls := &voice.Calls{DB: s.DB}
	snd := &voice.Sender{Endpoint: providerhttp.Endpoint{URL: prov.URL, Token: "voice-api-token-123456", Client: providerhttp.NewClient(0, 0)}, From: "+15550001000",
		CallbackURL: s.URL + providers.CallbackPath(channels.Voice, tenant), Calls: calls}
	msgs := []channels.Message{
		{Key: "c1", Tenant: tenant, To: "+15550000001", Text: "Test"},
		{Key: "c2", Tenant: tenant, To: "+15550000002", Text: "Test", Options: voice.Options{Confirm: true}},
	}
	if _, err := snd.Send(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	stacktest.Eventually(t, 30*time.Second, "both callbacks", func() bool {
		n, errs := prov.Callbacks()
		if len(errs) > 0 {
			t.Fatalf("callback errors %v", errs)
		}
		return n == 2
	})
	if c, _ := calls.Get(ctx, tenant, "c1"); c.Status != voice.StatusAnswered {
		t.Fatalf("%+v", c)
	}
	if c, _ := calls.Get(ctx, tenant, "c2"); c.Status != voice.StatusConfirmed || c.ConfirmedAt == nil {
		t.Fatalf("%+v", c)
	}
	path := providers.CallbackPath(channels.Voice, tenant)
	c1, _ := calls.Get(ctx, tenant, "c1")
	cb := func(callID, ref, status string) []byte {
		return []byte(fmt.Sprintf(`{"callId":%q,"reference":%q,"status":%q,"answeredBy":"machine"}`, callID, ref, status))
	}
	body := cb(c1.ProviderCallID, "c1", "busy")
	answered := cb(c1.ProviderCallID, "c1", "answered")
	sign := func(secret string, b []byte) string { return voice.Sign(secret, b, time.Now()) }
	type callbackCase struct {
		name, path, sig string
		body            []byte
		want            int
	}
	cases := []callbackCase{
		{"no signature", path, "", body, 401},
		{"forged", path, sign("someone-else-secret", body), body, 401},
		{"old timestamp", path, voice.Sign("callback-signing-secret", body, time.Now().Add(-time.Hour)), body, 401},
		{"fallback provider's secret", path, sign("backup-signing-secret-x", answered), answered, 204},
		{"unknown call", path, sign("callback-signing-secret", cb("x", "nope", "busy")), cb("x", "nope", "busy"), 404},
		{"stale attempt", path, sign("callback-signing-secret", cb("call-999", "c1", "busy")), cb("call-999", "c1", "busy"), 204},
		{"bad status", path, sign("callback-signing-secret", cb(c1.ProviderCallID, "c1", "ringing")), cb(c1.ProviderCallID, "c1", "ringing"), 400},
		{"not JSON, signed", path, sign("callback-signing-secret", []byte("callId=x")), []byte("callId=x"), 400},
		{"empty, signed", path, sign("callback-signing-secret", nil), nil, 400},
		// Before the signature verifies, nothing else is told: not whether
		// the tenant configured the channel, nor what is wrong with the body.
		{"tenant without settings", providers.CallbackPath(channels.Voice, stacktest.NewTenant()), sign("callback-signing-secret", body), body, 401},
		{"tenant without settings, unsigned", providers.CallbackPath(channels.Voice, stacktest.NewTenant()), "", body, 401},
		{"etn not configured", providers.CallbackPath(channels.Etn, tenant), sign("callback-signing-secret", body), body, 401},
		{"etn not configured, unsigned", providers.CallbackPath(channels.Etn, tenant), "", body, 401},
		{"bad status, unsigned", path, "", cb(c1.ProviderCallID, "c1", "ringing"), 401},
		{"bad status, forged", path, sign("someone-else-secret", cb(c1.ProviderCallID, "c1", "ringing")), cb(c1.ProviderCallID, "c1", "ringing"), 401},
		{"not JSON, unsigned", path, "", []byte("callId=x"), 401},
		{"empty, unsigned", path, "", nil, 401},
	}
	// What the server refuses in any other JSON body before its operation
	// runs (a property given twice, in the same case or not, a NUL, invalid
	// UTF-8) is refused here only once the signature verifies, naming the
	// field; unsigned, it is the same 401 as the rest.
	named := map[string]string{}
	for _, b := range []struct {
		name, field string
		body        []byte
	}{
		{"a property twice", "body.callId", []byte(`{"callId":"a","callId":"b","reference":"c1","status":"busy"}`)},
		{"a property twice, in another case", "body.CallId", []byte(`{"callId":"a","CallId":"b","reference":"c1","status":"busy"}`)},
		{"an escaped NUL", "body.callId", []byte(`{"callId":"a\u0000","reference":"c1","status":"busy"}`)},
		{"invalid UTF-8", "body.callId", []byte("{\"callId\":\"a\xff\",\"reference\":\"c1\",\"status\":\"busy\"}")},
	} {
		cases = append(cases, callbackCase{b.name + ", unsigned", path, "", b.body, 401},
			callbackCase{b.name + ", signed", path, sign("callback-signing-secret", b.body), b.body, 400})
		named[b.name+", signed"] = b.field
	}
	var refusals []string
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := []string{"Content-Type", "application/json"}
			if c.sig != "" {
				hdr = append(hdr, voice.SignatureHeader, c.sig)
			}
			r := s.Do(t, http.MethodPost, c.path, "", bytes.NewReader(c.body), hdr...)
			if r.Status != c.want {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			if c.want == 400 && !strings.Contains(string(r.Body), `"location":"body`) {
				t.Fatalf("a signed bad body is not named: %s", r.Body)
			}
			if f := named[c.name]; f != "" && !strings.Contains(string(r.Body), `"location":"`+f+`"`) {
				t.Fatalf("%s is not named: %s", f, r.Body)
			}
			if c.want == 401 {
				// Every refusal is the same answer, but for its instance.
				var p map[string]any
				r.JSON(t, &p)
				delete(p, "instance")
				b, _ := json.Marshal(p)
				refusals = append(refusals, r.Header.Get("Content-Type")+" "+string(b))
			}
		})
	}
	for _, r := range refusals {
		if r != refusals[0] {
			t.Fatalf("refusals differ:\n%s\n%s", refusals[0], r)
		}
	}
	if c, _ := calls.Get(ctx, tenant, "c1"); c.Status != voice.StatusAnswered || c.AnsweredBy != "machine" {
		t.Fatalf("only the signed callbacks count: %+v", c)
	}
}

// TestEtnAddressPointLists imports address-point lists and sends an ETN
// alert to an area: it calls the points of the lists it names inside the
// area, and neither the points of other lists nor another tenant's.
// TestEtnAddressPointLists imports address-point lists and sends an ETN
// alert to an area: it calls the contacts' phones inside the area and the
// points of the lists it names inside the area, a number once and as the
// contact, and neither the points of other lists nor another tenant's.
func TestEtnAddressPointLists(t *testing.T) {
	t.Parallel()
	// The ETN provider is a loopback speaking plain http.
	s := stacktest.Start(t, func(c *config.Config) { c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true })
	tenant, tok := s.NewTenant(t)
	_, other := s.NewTenant(t)
	csv := "phone,latitude,longitude,name,address\n+15550000001,45.0,-122.0,Well 1,1 Main St\nbad,45,-122,,\n+15550000002,45.1,-122.1,Well 2,\n" +
		"+12025550105,45.0001,-122.0,Pat's well,\n"
	r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells%202026", tok, strings.NewReader(csv), "Content-Type", "text/csv")
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var res model.EtnAddressPointImportResult
	r.JSON(t, &res)
	if res.ListName != "wells 2026" || res.Imported != 3 || res.Rejected != 1 || res.Errors[0].Line != 3 {
		t.Fatalf("%+v", res)
	}
	if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/x", tok, strings.NewReader("name\nfoo\n"), "Content-Type", "text/csv"); r.Status != 400 {
		t.Fatalf("a CSV without phone %d %s", r.Status, r.Body)
	}
	wantOneList(t, s, tok, 3)
	// Points inside the area that the alert must not call: a list it does
	// not name, and another tenant's list of the same name.
	for _, imp := range []struct{ tok, list, csv string }{
		{tok, "pumps", "phone,latitude,longitude,name\n+15550000003,45.0005,-122.0,Pump\n"},
		{other, "wells%202026", "phone,latitude,longitude,name\n+15550000004,45.0,-122.0005,Other well\n"},
	} {
		if r := s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/"+imp.list, imp.tok, strings.NewReader(imp.csv), "Content-Type", "text/csv"); r.Status != 200 {
			t.Fatalf("%s: %d %s", imp.list, r.Status, r.Body)
		}
	}
	// A contact at home inside the area, with the number of one of the points.
	var pat struct{ ID string }
	s.Create(t, "/"+tenant+"/directory/staff/users", tok, map[string]any{"name": map[string]any{"first": "Pat", "last": "Contact"}}).JSON(t, &pat)
	s.Create(t, "/"+tenant+"/directory/staff/users/"+pat.ID+"/contact/phones", tok, map[string]any{"number": "+12025550105"})
	s.Create(t, "/"+tenant+"/directory/staff/users/"+pat.ID+"/notifications/locations", tok, map[string]any{"name": "home",
		"geoLocation": map[string]any{"latitude": 45.0002, "longitude": -122.0}})

	prov := voicetest.New(t, "voice-api-token-123456", "callback-signing-secret")
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/etn", tok, voiceSettings(prov.URL)); r.Status != 200 {
		t.Fatalf("etn settings %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts", tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Boil water", "body": "Boil water before drinking."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{"wells 2026"}}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 45, "lng": -122}, "radiusMeters": 1000}}},
	}})
	if r.Status != http.StatusCreated {
		t.Fatalf("send %d %s", r.Status, r.Body)
	}
	var sent struct{ AlertID int64 }
	r.JSON(t, &sent)
	stacktest.Eventually(t, 60*time.Second, "the alert to complete", func() bool {
		var st struct{ Completed bool }
		s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/status", sent.AlertID), tok, nil).JSON(t, &st)
		return st.Completed
	})
	var page model.EtnResultsSummaryResponse
	if r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/channels/etn", sent.AlertID), tok, nil); r.Status != 200 {
		t.Fatalf("etn page %d %s", r.Status, r.Body)
	} else {
		r.JSON(t, &page)
	}
	var got []string
	for _, it := range page.Items {
		contact := "point"
		if it.ContactID != nil {
			contact = "contact " + strconv.FormatInt(*it.ContactID, 10)
		}
		got = append(got, fmt.Sprintf("%d %s %s", it.RecipientID, it.Phone, contact))
	}
	want := []string{"1 +12025550105 contact " + pat.ID, "2 +15550000001 point"}
	if !slices.Equal(got, want) || page.Totals.Total != 2 || page.Items[1].Name.First != "Well 1" ||
		page.Items[0].Name.First != "Pat" || page.Items[0].Name.Last != "Contact" {
		t.Fatalf("etn page %v, want %v: %+v", got, want, page)
	}
	var called []string
	for _, c := range prov.Calls() {
		called = append(called, c.Request.To)
	}
	slices.Sort(called)
	if !slices.Equal(called, []string{"+12025550105", "+15550000001"}) {
		t.Fatalf("called %v, want each number inside the area once", called)
	}

	if r := s.Do(t, http.MethodDelete, "/v2/settings/etn/addressPointLists/wells%202026", other, nil); r.Status != 204 {
		t.Fatalf("the other tenant's own list: %d", r.Status)
	}
	if r := s.Do(t, http.MethodDelete, "/v2/settings/etn/addressPointLists/wells%202026", other, nil); r.Status != 404 {
		t.Fatalf("another tenant deleted: %d", r.Status)
	}
	if r := s.Do(t, http.MethodDelete, "/v2/settings/etn/addressPointLists/wells%202026", tok, nil); r.Status != 204 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func mustBox(t *testing.T) *secrets.Box {
	b, err := secrets.New(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEtnAddressPointImportRefusesBadHeaders: the address-point import takes
// the contacts import's rule for its header (an unknown or repeated column
// rejects the file, naming it, and keeps the list as it was) and only
// text/csv bodies (anything else is a 415).
func TestEtnAddressPointImportRefusesBadHeaders(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	put := func(body, contentType string) stacktest.Response {
		t.Helper()
		return s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(body), "Content-Type", contentType)
	}
	if r := put("phone,latitude,longitude,name\n+15550000001,45.0,-122.0,Well 1\n", "text/csv; charset=utf-8"); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	cases := []struct{ name, csv, message string }{
		{"repeated columns", "phone,latitude,longitude,phone,latitude\n+15550000002,45.0,-122.0,+15550000003,10.0\n", `column \"phone\" appears twice`},
		{"repeated in another case", "Phone,Latitude,Longitude,LATITUDE\n+15550000002,45.0,-122.0,10.0\n", `column \"latitude\" appears twice`},
		{"unknown column", "phone,latitude,longitude,adress\n+15550000002,45.0,-122.0,1 Main St\n", `unknown column \"adress\"; the columns are phone, latitude, longitude, name, address, externalId`},
		{"missing column", "phone,latitude\n+15550000002,45.0\n", "lacks the required columns longitude"},
		{"no point at all", "phone,latitude,longitude\n15550000002,45.0,-122.0\n", "no row is an address point: the list is left as it was"},
		{"a header alone", "phone,latitude,longitude\n", "no row is an address point"},
	}
	for _, c := range cases {
		r := put(c.csv, "text/csv")
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), c.message) || !strings.Contains(string(r.Body), `"location":"body.csv"`) {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	for _, ct := range []string{"application/json", "text/plain", ""} {
		r := put("phone,latitude,longitude\n+15550000002,45.0,-122.0\n", ct)
		if r.Status != http.StatusUnsupportedMediaType || !strings.Contains(string(r.Body), "text/csv") {
			t.Errorf("Content-Type %q: %d %s", ct, r.Status, r.Body)
		}
	}
	wantOneList(t, s, tok, 1)
}

// TestEtnAddressPointImportNamesLinesAndBoundsRows: a rejected row names the
// line it starts on in the file (empty lines and line breaks inside quoted
// fields count), and a row longer than 1 MiB — no line break, or a quoted
// field that runs on — refuses the file with a 400 naming its line and
// leaves the list as it was.
func TestEtnAddressPointImportNamesLinesAndBoundsRows(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	put := func(body string) stacktest.Response {
		t.Helper()
		return s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/wells", tok, strings.NewReader(body), "Content-Type", "text/csv")
	}
	r := put(etntest.NumberedLines)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var res model.EtnAddressPointImportResult
	r.JSON(t, &res)
	var lines []int
	for _, e := range res.Errors {
		lines = append(lines, e.Line)
	}
	if res.Imported != 2 || res.Rejected != 3 || !slices.Equal(lines, etntest.RefusedLines) {
		t.Fatalf("rejected rows on lines %v, want 5, 11, 12: %+v", lines, res)
	}

	head := "phone,latitude,longitude\n+15550000005,45.0,-122.0\n\n" // the long row starts on line 4
	for name, long := range map[string]string{
		"no line break":          "+15550000006,45.0," + strings.Repeat("1", 5<<20),
		"a quoted field runs on": "+15550000006,45.0,\"-122" + strings.Repeat("\n+15550000007,45.0,-122.0", 5<<20/25) + "\n",
	} {
		r := put(head + long)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"location":"body.csv"`) ||
			!strings.Contains(string(r.Body), "line 4: a row longer than 1 MiB (1048576 bytes) starts on this line") {
			t.Errorf("%s: %d %.500s", name, r.Status, r.Body)
		}
	}
	wantOneList(t, s, tok, 2)
}

// A masked secret keeps the stored one only while the URL it is sent to
// keeps its destination (scheme, host, port and path): otherwise whoever may
// change the settings could have the credentials sent to a host of their own.
func TestMaskedSecretsStayWithTheirDestination(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	st := &providers.Store{DB: s.DB, Box: mustBox(t)}
	stored := func(ch channels.Channel) providers.Settings {
		t.Helper()
		e, err := st.Get(context.Background(), tenant, ch)
		if err != nil {
			t.Fatal(err)
		}
		return e.Settings
	}
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, voiceSettings("https://voice.example/v1")); r.Status != 200 {
		t.Fatalf("put %d %s", r.Status, r.Body)
	}
	read := func() model.ChannelProviderSettings {
		var got model.ChannelProviderSettingsResponse
		s.Do(t, http.MethodGet, "/v2/settings/channels/voice", tok, nil).JSON(t, &got)
		return got.Settings
	}

	// The same destination, written with the port, another case and a
	// trailing slash: kept.
	same := read()
	same.Providers[0].URL = "https://VOICE.example:443/v1/"
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, same); r.Status != 200 {
		t.Fatalf("same destination %d %s", r.Status, r.Body)
	}
	if p := stored(channels.Voice).Providers[0]; p.Token != "voice-api-token-123456" || p.SigningSecret != "callback-signing-secret" {
		t.Fatalf("same destination stored %+v", p)
	}

	// A new host, port, scheme or path: each masked secret is refused,
	// naming it, and nothing changes.
	for _, c := range []struct{ url, token, field string }{
		{"https://8.8.4.4/collect", "", "providers[0].token"},
		{"https://voice.example:8443/v1", "", "providers[0].token"},
		{"http://voice.example/v1", "", "providers[0].token"},
		{"https://voice.example/elsewhere", "", "providers[0].token"},
		{"https://voice.example/v1?account=theirs", "", "providers[0].token"},
		{"https://8.8.4.4/collect", "new-voice-token-000000", "providers[0].signingSecret"},
	} {
		moved := read()
		moved.Providers[0].URL = c.url
		if c.token != "" {
			moved.Providers[0].Token = c.token
		}
		r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, moved)
		if r.Status != 400 || !strings.Contains(string(r.Body), `"propertyName":"`+c.field+`"`) || !strings.Contains(string(r.Body), "destination changed") {
			t.Errorf("%s: %d %s", c.url, r.Status, r.Body)
		}
	}
	if p := stored(channels.Voice).Providers[0]; p.URL != "https://VOICE.example:443/v1/" || p.Token != "voice-api-token-123456" {
		t.Fatalf("a refused put changed %+v", p)
	}

	// The secrets themselves may go to the new destination; the fallback,
	// whose URL did not move, keeps its own.
	moved := read()
	moved.Providers[0].URL, moved.Providers[0].Token, moved.Providers[0].SigningSecret = "https://8.8.4.4/collect", "new-voice-token-000000", "new-signing-secret-0000"
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, moved); r.Status != 200 {
		t.Fatalf("new destination with the secrets %d %s", r.Status, r.Body)
	}
	if ps := stored(channels.Voice).Providers; ps[0].URL != "https://8.8.4.4/collect" || ps[0].Token != "new-voice-token-000000" ||
		ps[0].SigningSecret != "new-signing-secret-0000" || ps[1].Token != "backup-token-abcdefgh" {
		t.Fatalf("stored %+v", ps)
	}

	// Accounts' tokens are posted to every provider URL: a masked one is
	// refused once a provider URL is new.
	social := func(url, token string) map[string]any {
		return map[string]any{
			"providers": []map[string]any{{"url": url}},
			"accounts":  []map[string]any{{"id": "city", "name": "City", "token": token}},
		}
	}
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/socialPostA", tok, social("https://social.example/api", "account-token-9876")); r.Status != 200 {
		t.Fatalf("social %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/socialPostA", tok, social("https://social.example/api", "****9876")); r.Status != 200 {
		t.Fatalf("social, same destination %d %s", r.Status, r.Body)
	}
	r := s.Do(t, http.MethodPut, "/v2/settings/channels/socialPostA", tok, social("https://8.8.4.4/collect", "****9876"))
	if r.Status != 400 || !strings.Contains(string(r.Body), `"propertyName":"accounts[0].token"`) {
		t.Fatalf("social, new destination %d %s", r.Status, r.Body)
	}
	if a := stored(channels.SocialPostA); a.Providers[0].URL != "https://social.example/api" || a.Accounts[0].Token != "account-token-9876" {
		t.Fatalf("social stored %+v", a)
	}
}
