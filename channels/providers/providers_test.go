package providers_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/cap/captest"
	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/channels/fax/faxtest"
	"github.com/tocsin/tocsin/channels/neighborhood/neighborhoodtest"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/channels/push/pushtest"
	"github.com/tocsin/tocsin/channels/social/socialtest"
	"github.com/tocsin/tocsin/channels/teamchat/teamchattest"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

func box(t *testing.T) *secrets.Box {
	b, err := secrets.New(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidate(t *testing.T) {
	voice := providers.Settings{Providers: []providers.Provider{{URL: "https://v.example", Token: "t", From: "+15550001000", SigningSecret: "0123456789abcdef"}}}
	push := func(u string) providers.Settings {
		return providers.Settings{Providers: []providers.Provider{{URL: u, Token: "t"}}}
	}
	cases := []struct {
		name  string
		ch    channels.Channel
		s     providers.Settings
		field string
	}{
		{"voice ok", channels.Voice, voice, ""},
		{"email is not ours", channels.Email, voice, "channel"},
		{"no provider", channels.Push, providers.Settings{}, "providers"},
		{"three providers", channels.Push, providers.Settings{Providers: make([]providers.Provider, 3)}, "providers"},
		{"bad url", channels.Push, providers.Settings{Providers: []providers.Provider{{URL: "ftp://x", Token: "t"}}}, "providers[0].url"},
		{"credentials in url", channels.Push, providers.Settings{Providers: []providers.Provider{{URL: "https://u:p@x", Token: "t"}}}, "providers[0].url"},
		{"voice without caller id", channels.Voice, providers.Settings{Providers: []providers.Provider{{URL: "https://v", Token: "t", SigningSecret: "0123456789abcdef"}}}, "providers[0].from"},
		{"short signing secret", channels.Etn, providers.Settings{Providers: []providers.Provider{{URL: "https://v", Token: "t", From: "+15550001000", SigningSecret: "short"}}}, "providers[0].signingSecret"},
		{"team chat without targets", channels.TeamChat, providers.Settings{}, "targets"},
		{"team chat style", channels.TeamChat, providers.Settings{Targets: []providers.Target{{Name: "a", URL: "https://h/x", Style: "irc"}}}, "targets[0].style"},
		{"duplicate account", channels.SocialPostA, providers.Settings{Providers: []providers.Provider{{URL: "https://s"}}, Accounts: []providers.Account{{ID: "a", Name: "A", Token: "t"}, {ID: "a", Name: "B", Token: "t"}}}, "accounts[1].id"},
		{"neighborhood without groups", channels.Neighborhood, providers.Settings{Providers: []providers.Provider{{URL: "https://n"}}, Accounts: []providers.Account{{ID: "a", Name: "A", Token: "t"}}}, "accounts[0].groups"},
		{"host of a dot", channels.Push, push("https://./v1"), "providers[0].url"},
		{"host with two trailing dots", channels.Push, push("https://example.com../v1"), "providers[0].url"},
		{"empty port", channels.Push, push("https://example.com:/x"), "providers[0].url"},
		{"fullwidth letter", channels.Push, push("https://ｅxample.com/v1"), "providers[0].url"},
		{"label of 64 bytes", channels.Push, push("https://" + strings.Repeat("a", 64) + ".example/v1"), "providers[0].url"},
		{"name of 254 bytes", channels.Push, push("https://" + strings.Repeat(strings.Repeat("a", 62)+".", 4) + "ab/v1"), "providers[0].url"},
		{"asterisk", channels.Push, push("https://a*b.example/v1"), "providers[0].url"},
		{"leading hyphen", channels.Push, push("https://-a.example/v1"), "providers[0].url"},
		{"trailing hyphen", channels.Push, push("https://a-.example/v1"), "providers[0].url"},
		{"fallback host", channels.Push, providers.Settings{Providers: []providers.Provider{{URL: "https://p.example", Token: "t"}, {URL: "https://p..example", Token: "t"}}}, "providers[1].url"},
		{"CAP endpoint host", channels.Eas, push("https://ｃap.example/v1"), "providers[0].url"},
		{"webhook host", channels.TeamChat, providers.Settings{Targets: []providers.Target{{Name: "a", URL: "https://hooks.example:/x", Style: "slack"}}}, "targets[0].url"},
		{"localhost", channels.Push, push("http://localhost:8080/v1"), ""},
		{"ipv6 literal", channels.Push, push("https://[2001:db8::1]:8443/v1"), ""},
		{"trailing dot", channels.Push, push("https://push.example./v1"), ""},
		{"internationalized name", channels.Push, push("https://bücher.example/v1"), ""},
		{"name of 253 bytes", channels.Push, push("https://" + strings.Repeat(strings.Repeat("a", 62)+".", 4) + "a/v1"), ""},
		{"negative rate", channels.Push, providers.Settings{RatePerSecond: -1, Providers: []providers.Provider{{URL: "https://p", Token: "t"}}}, "ratePerSecond"},
	}
	for _, c := range cases {
		err := c.s.Validate(c.ch)
		var fe *providers.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%s: %v, want a problem with %s", c.name, err, c.field)
		}
	}
}

func TestStoreSealsAndMasks(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	st := &providers.Store{DB: db, Box: box(t)}
	tenant := stacktest.NewTenant()
	s := providers.Settings{Targets: []providers.Target{{Name: "ops", URL: "https://hooks.example/services/T1/B1/very-secret-path", Style: "slack"}}}
	e, created, err := st.Put(ctx, tenant, channels.TeamChat, s)
	if err != nil || !created {
		t.Fatalf("%v %v", created, err)
	}
	stored, err := (&channelstate.Providers{DB: db}).Get(ctx, tenant, string(channels.TeamChat))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored.Sealed, []byte("very-secret-path")) {
		t.Fatal("the webhook is stored in the clear")
	}
	m := e.Settings.Masked()
	if strings.Contains(m.Targets[0].URL, "very-secret") || !strings.HasPrefix(m.Targets[0].URL, "https://hooks.example/****") {
		t.Fatalf("masked %q", m.Targets[0].URL)
	}
	// Sending back what was read keeps the secret.
	if _, created, err := st.Put(ctx, tenant, channels.TeamChat, m); err != nil || created {
		t.Fatalf("%v %v", created, err)
	}
	got, err := st.Get(ctx, tenant, channels.TeamChat)
	if err != nil || got.Settings.Targets[0].URL != s.Targets[0].URL {
		t.Fatalf("%+v %v", got, err)
	}
	// A masked value that matches nothing stored is refused.
	m.Targets[0].Name = "other"
	var fe *providers.FieldError
	if _, _, err := st.Put(ctx, tenant, channels.TeamChat, m); !errors.As(err, &fe) || fe.Field != "targets[0].url" {
		t.Fatalf("%v", err)
	}
	// Another tenant does not see it, and a sealed value copied to another
	// tenant's row does not open.
	other := stacktest.NewTenant()
	if _, err := st.Get(ctx, other, channels.TeamChat); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("%v", err)
	}
	if _, _, err := (&channelstate.Providers{DB: db}).Put(ctx, other, stored.Channel, stored.Sealed); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, other, channels.TeamChat); !errors.Is(err, secrets.ErrOpen) {
		t.Fatalf("a copied row opened: %v", err)
	}
	if err := st.Delete(ctx, tenant, channels.TeamChat); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, tenant, channels.TeamChat); !errors.Is(err, storage.ErrNotFound) {
		t.Fatal(err)
	}
}

// TestEveryChannelThroughTheRegistry configures a tenant's providers as
// loopbacks and sends through the Senders the worker uses.
func TestEveryChannelThroughTheRegistry(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	objs := stacktest.Objects(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	st := &providers.Store{DB: db, Box: box(t)}
	loopback, err := hooks.NewPolicy([]string{"127.0.0.1"}, true)
	if err != nil {
		t.Fatal(err)
	}
	reg := &providers.Registry{Store: st, DB: db, Objects: objs, PublicURL: "http://127.0.0.1:1", Guard: loopback}
	senders := reg.Senders()

	docKey := storage.TenantKey(tenant, "evacuation.pdf")
	if _, err := objs.Client.PutObject(ctx, objs.Bucket, docKey, strings.NewReader("%PDF-1.4 map"), 12, minio.PutObjectOptions{ContentType: "application/pdf"}); err != nil {
		t.Fatal(err)
	}
	audioKey := storage.TenantKey(tenant, "voice/siren.wav")
	if _, err := objs.Client.PutObject(ctx, objs.Bucket, audioKey, strings.NewReader("RIFFwav"), 7, minio.PutObjectOptions{ContentType: "audio/wav"}); err != nil {
		t.Fatal(err)
	}
	foreignKey := storage.TenantKey("42", "secret.pdf")
	if _, err := objs.Client.PutObject(ctx, objs.Bucket, foreignKey, strings.NewReader("%PDF other"), 10, minio.PutObjectOptions{ContentType: "application/pdf"}); err != nil {
		t.Fatal(err)
	}

	voiceSrv := voicetest.New(t, "voice-token", "voice-signing-secret")
	downPush, pushSrv := pushtest.New(t, "push-1"), pushtest.New(t, "push-2")
	downPush.FailWith(503)
	faxSrv := faxtest.New(t, "fax-token")
	capSrv := captest.New(t, "cap-token")
	chat := teamchattest.New(t)
	soc := socialtest.New(t, map[string]string{"county": "tok-a"})
	nb := neighborhoodtest.New(t, map[string]neighborhoodtest.Account{"pd": {Token: "tok-n", Groups: []string{"g1"}}})

	put := func(ch channels.Channel, s providers.Settings) {
		t.Helper()
		if _, _, err := st.Put(ctx, tenant, ch, s); err != nil {
			t.Fatalf("%s: %v", ch, err)
		}
	}
	vp := []providers.Provider{{URL: voiceSrv.URL, Token: "voice-token", From: "+15550001000", SigningSecret: "voice-signing-secret"}}
	put(channels.Voice, providers.Settings{Providers: vp})
	put(channels.Etn, providers.Settings{Providers: vp, MaxConcurrentCalls: 2})
	put(channels.Push, providers.Settings{Providers: []providers.Provider{{URL: downPush.URL, Token: "push-1"}, {URL: pushSrv.URL, Token: "push-2"}}, RatePerSecond: 500, Burst: 50})
	put(channels.Fax, providers.Settings{Providers: []providers.Provider{{URL: faxSrv.URL, Token: "fax-token", From: "+15550002000"}}})
	put(channels.Eas, providers.Settings{Providers: []providers.Provider{{URL: capSrv.URL + "/cap", Token: "cap-token", SenderID: "oem@county.example"}}})
	put(channels.TeamChat, providers.Settings{Targets: []providers.Target{{Name: "ops", URL: chat.Webhook("teams", "s3"), Style: "teams"}}})
	put(channels.SocialPostA, providers.Settings{Providers: []providers.Provider{{URL: soc.URL}}, Accounts: []providers.Account{{ID: "county", Name: "County", Token: "tok-a"}}})
	put(channels.Neighborhood, providers.Settings{Providers: []providers.Provider{{URL: nb.URL}}, Accounts: []providers.Account{{ID: "pd", Name: "PD", Token: "tok-n", Groups: []providers.Group{{ID: "g1", Name: "North"}}}}})

	capIn := cap.Input{Status: "Actual", MsgType: "Alert", Scope: "Public", Classification: cap.Classification{Category: []string{"Safety"}, Event: "Evacuation",
		Urgency: "Immediate", Severity: "Extreme", Certainty: "Observed"}, Areas: []cap.AreaInput{{Description: "County", SAME: []string{"041005"}}}}
	cases := []struct {
		ch   channels.Channel
		msg  channels.Message
		want channels.Outcome
	}{
		{channels.Voice, channels.Message{To: "+15550000001", Text: "Evacuate", Options: voice.Options{AudioKey: audioKey}}, channels.Sent},
		{channels.Voice, channels.Message{To: "+15550000001", Text: "Evacuate", Options: voice.Options{AudioKey: foreignKey}}, channels.Failed},
		{channels.Etn, channels.Message{To: "+15550000002", Text: "Evacuate"}, channels.Sent},
		{channels.Push, channels.Message{To: "device-1", Text: "Evacuate"}, channels.Sent},
		{channels.Fax, channels.Message{To: "+15550000003", Options: fax.Options{DocumentKey: docKey}}, channels.Sent},
		{channels.Fax, channels.Message{To: "+15550000003", Options: fax.Options{DocumentKey: foreignKey}}, channels.Failed},
		{channels.Eas, channels.Message{Subject: "Evacuate", Text: "Leave now", Options: cap.Options{Input: capIn}}, channels.Sent},
		{channels.TeamChat, channels.Message{To: "ops", Subject: "Evacuate", Text: "Leave now"}, channels.Delivered},
		{channels.SocialPostA, channels.Message{To: "county", Text: "Evacuate"}, channels.Delivered},
		{channels.Neighborhood, channels.Message{To: "pd", Text: "Evacuate"}, channels.Delivered},
		{channels.MobileBroadcast, channels.Message{Text: "Evacuate"}, channels.Failed}, // not configured
	}
	for i, c := range cases {
		c.msg.Key, c.msg.Tenant = "m"+string(rune('a'+i)), tenant
		snd, err := senders.For(c.ch)
		if err != nil {
			t.Fatal(err)
		}
		res, err := snd.Send(ctx, []channels.Message{c.msg})
		if err != nil {
			t.Fatalf("%s: %v", c.ch, err)
		}
		if res[0].Outcome != c.want {
			t.Errorf("%s: %+v", c.ch, res[0])
		}
	}
	if len(voiceSrv.Calls()) != 2 || len(pushSrv.Received()) != 1 || len(downPush.Received()) != 0 || len(faxSrv.Faxes()) != 1 ||
		len(capSrv.Documents()) != 1 || len(chat.Posts()) != 1 || len(soc.Posts()) != 1 || len(nb.Posts()) != 1 {
		t.Fatal("a loopback did not get its message")
	}
	if f := faxSrv.Faxes()[0]; string(f.Document) != "%PDF-1.4 map" {
		t.Fatalf("fax document %q", f.Document)
	}
	if p := voiceSrv.Calls()[0].Request.Play; p == nil || !strings.Contains(p.URL, "siren.wav") || !strings.Contains(p.URL, "X-Amz-Signature") {
		t.Fatalf("the call does not play a link to the stored audio: %+v", voiceSrv.Calls()[0].Request)
	}
	if cb := voiceSrv.Calls()[0].Request.StatusCallback; !strings.HasPrefix(cb, "http://127.0.0.1:1/v2/callbacks/") || !strings.HasSuffix(cb, "/"+tenant) {
		t.Fatalf("status callback %q", cb)
	}
	for _, srv := range []interface{ Problems() []string }{voiceSrv, pushSrv, faxSrv, capSrv, chat, soc, nb} {
		if p := srv.Problems(); len(p) != 0 {
			t.Fatalf("problems %v", p)
		}
	}
	if err := captest.Validate(t, capSrv.Documents()[0]); err != nil {
		t.Fatal(err)
	}
}

// TestProviderURLsFollowTheOutboundPolicy: a loopback or private provider
// URL is refused when saved, naming the field, and refused again when a
// message would connect to it; the provider's answer never reaches the
// result.
func TestProviderURLsFollowTheOutboundPolicy(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	strict, err := hooks.NewPolicy(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	guarded := &providers.Store{DB: db, Box: box(t), Guard: strict}
	for field, s := range map[string]providers.Settings{
		"providers[0].url": {Providers: []providers.Provider{{URL: "https://127.0.0.1:9/x", Token: "t"}}},
		"providers[1].url": {Providers: []providers.Provider{{URL: "https://push.example/v1", Token: "t"}, {URL: "https://169.254.169.254/latest", Token: "t"}}},
	} {
		_, _, err := guarded.Put(ctx, tenant, channels.Push, s)
		var fe *providers.FieldError
		if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Message, "address") {
			t.Fatalf("%s: %v", field, err)
		}
	}
	_, _, err = guarded.Put(ctx, tenant, channels.Push, providers.Settings{Providers: []providers.Provider{{URL: "http://push.example/v1", Token: "t"}}})
	if fe := (*providers.FieldError)(nil); !errors.As(err, &fe) || !strings.Contains(fe.Message, "https") {
		t.Fatalf("plain http: %v", err)
	}

	// Saved without the guard (as before the policy), refused at connection.
	push := pushtest.New(t, "push-token")
	st := &providers.Store{DB: db, Box: box(t)}
	if _, _, err := st.Put(ctx, tenant, channels.Push, providers.Settings{Providers: []providers.Provider{{URL: push.URL, Token: "push-token"}}}); err != nil {
		t.Fatal(err)
	}
	reg := &providers.Registry{Store: st, DB: db, PublicURL: "http://127.0.0.1:1", Guard: strict}
	res, err := reg.Senders()[channels.Push].Send(ctx, []channels.Message{{Key: "k", Tenant: tenant, To: "device-1", Text: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome == channels.Delivered || !strings.Contains(res[0].Error, "not allowed") {
		t.Fatalf("loopback provider reached: %+v", res[0])
	}
	if len(push.Received()) != 0 {
		t.Fatal("the loopback provider received a request")
	}
}

// TestRegistryWithoutGuardBuildsNothing: a registry the wiring gave no
// outbound policy refuses to build a Sender rather than connect unchecked
// or by a policy of its own.
func TestRegistryWithoutGuardBuildsNothing(t *testing.T) {
	t.Parallel()
	reg := &providers.Registry{PublicURL: "http://127.0.0.1:1"}
	s := providers.Settings{Providers: []providers.Provider{{URL: "https://push.example/v1", Token: "t"}}}
	if snd, err := reg.Build("1", channels.Push, s); !errors.Is(err, providers.ErrNoGuard) {
		t.Fatalf("built %v, %v; want ErrNoGuard", snd, err)
	}
}

// TestProviderTimeoutIsTheRegistrys: a provider slower than the registry's
// Timeout (TOCSIN_PROVIDER_TIMEOUT) fails the message once the timeout has
// passed, not the default's 15 s later.
func TestProviderTimeoutIsTheRegistrys(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)
	loopback, err := hooks.NewPolicy([]string{"127.0.0.1"}, true)
	if err != nil {
		t.Fatal(err)
	}
	st := &providers.Store{DB: db, Box: box(t)}
	if _, _, err := st.Put(ctx, tenant, channels.TeamChat, providers.Settings{Targets: []providers.Target{{Name: "ops", URL: slow.URL + "/hook", Style: "slack"}}}); err != nil {
		t.Fatal(err)
	}
	reg := &providers.Registry{Store: st, DB: db, PublicURL: "http://127.0.0.1:1", Guard: loopback, Timeout: 300 * time.Millisecond}
	began := time.Now()
	res, err := reg.Senders()[channels.TeamChat].Send(ctx, []channels.Message{{Key: "k", Tenant: tenant, To: "ops", Text: "x"}})
	took := time.Since(began)
	if err == nil && res[0].Outcome == channels.Delivered {
		t.Fatalf("a provider that never answered delivered: %+v", res)
	}
	if took > 2*time.Second {
		t.Fatalf("the send took %s, want about the registry's 300ms timeout", took)
	}
}
