package cap_test

import (
	"context"
	"crypto/sha1" //nolint:gosec // CAP's digest
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/cap/captest"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/internal/stacktest"
)

var sent = time.Date(2026, 3, 1, 14, 30, 0, 0, time.FixedZone("PST", -8*3600))

func base() cap.Input {
	return cap.Input{
		Identifier: "tocsin-1001-42", Sender: "alerts@county.example", Sent: sent,
		Status: "Actual", MsgType: "Alert", Scope: "Public",
		Classification: cap.Classification{Category: []string{"Met"}, Event: "Flash Flood Warning", ResponseType: []string{"Evacuate"},
			Urgency: "Immediate", Severity: "Severe", Certainty: "Observed"},
		EventCode: "FFW", Expires: sent.Add(6 * time.Hour),
		Wording: cap.Wording{Headline: "Flash flood warning for the river valley", Description: "The river is rising fast.",
			Instruction: "Move to higher ground now."},
		Areas: []cap.AreaInput{
			{Description: "River valley", Polygons: [][]cap.Point{{{45.1, -122.1}, {45.1, -122.0}, {45.2, -122.0}, {45.2, -122.1}}}},
			{Description: "Around the dam", Center: &cap.Point{Lat: 45.15, Lng: -122.05}, RadiusKm: 2.5},
			{Description: "Clackamas County", SAME: []string{"041005"}, Geocodes: []cap.NamedValue{{ValueName: "UGC", Value: "ORZ006"}}},
		},
	}
}

func TestBuildValidatesAgainstTheSchema(t *testing.T) {
	ref := cap.Ref{Sender: "alerts@county.example", Identifier: "tocsin-1001-42", Sent: sent}
	update := base()
	update.Identifier, update.MsgType, update.References = "tocsin-1001-42-u1", "Update", []cap.Ref{ref}
	update.Sent = sent.Add(time.Hour)
	cancel := base()
	cancel.Identifier, cancel.MsgType, cancel.References = "tocsin-1001-42-c1", "Cancel", []cap.Ref{ref, {Sender: ref.Sender, Identifier: "tocsin-1001-42-u1", Sent: sent.Add(time.Hour)}}
	cancel.Sent = sent.Add(2 * time.Hour)
	exercise := base()
	exercise.Status, exercise.Scope, exercise.Category = "Exercise", "Restricted", []string{"Safety", "Infra"}
	exercise.Parameters = []cap.NamedValue{{ValueName: "CMAMtext", Value: "Test"}}
	exercise.Resources = []cap.Resource{{ResourceDesc: "map", MimeType: "image/png", URI: "https://files.example/map.png"}}
	for name, in := range map[string]cap.Input{"alert": base(), "update": update, "cancel": cancel, "exercise": exercise} {
		t.Run(name, func(t *testing.T) {
			a, err := cap.Build(in)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := cap.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			if err := captest.Validate(t, doc); err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
		})
	}
	a, _ := cap.Build(cancel)
	if a.References != "alerts@county.example,tocsin-1001-42,2026-03-01T22:30:00+00:00 alerts@county.example,tocsin-1001-42-u1,2026-03-01T23:30:00+00:00" {
		t.Fatalf("references %q", a.References)
	}
	if p := a.Info[0].Area[0].Polygon[0]; !strings.HasSuffix(p, "45.1,-122.1") || strings.Count(p, " ") != 4 {
		t.Fatalf("the polygon is closed: %q", p)
	}
	if c := a.Info[0].Area[1].Circle[0]; c != "45.15,-122.05 2.5" {
		t.Fatalf("circle %q", c)
	}
}

// TestSchemaCatchesBadDocuments makes sure the validation can fail.
func TestSchemaCatchesBadDocuments(t *testing.T) {
	a, err := cap.Build(base())
	if err != nil {
		t.Fatal(err)
	}
	bad := *a
	bad.Sent = "2026-03-01T22:30:00Z" // CAP wants a numeric zone
	doc, _ := cap.Marshal(&bad)
	if err := captest.Validate(t, doc); err == nil {
		t.Fatal("a sent time with Z validated")
	}
	bad = *a
	bad.Info = append([]cap.Info(nil), a.Info...)
	bad.Info[0].Urgency = "Soon"
	doc, _ = cap.Marshal(&bad)
	if err := captest.Validate(t, doc); err == nil {
		t.Fatal("an unknown urgency validated")
	}
}

func TestBuildRefuses(t *testing.T) {
	cases := map[string]func(*cap.Input){
		"identifier with a space": func(in *cap.Input) { in.Identifier = "a b" },
		"unknown status":          func(in *cap.Input) { in.Status = "Real" },
		"update without refs":     func(in *cap.Input) { in.MsgType = "Update" },
		"no category":             func(in *cap.Input) { in.Category = nil },
		"unknown severity":        func(in *cap.Input) { in.Severity = "Bad" },
		"expires before sent":     func(in *cap.Input) { in.Expires = in.Sent.Add(-time.Minute) },
		"no area":                 func(in *cap.Input) { in.Areas = nil },
		"two-point polygon": func(in *cap.Input) {
			in.Areas = []cap.AreaInput{{Description: "x", Polygons: [][]cap.Point{{{1, 1}, {2, 2}}}}}
		},
		"bad SAME code": func(in *cap.Input) { in.Areas = []cap.AreaInput{{Description: "x", SAME: []string{"41005"}}} },
		"bad language":  func(in *cap.Input) { in.Languages = []string{"en_US"} },
		"too many points": func(in *cap.Input) {
			ring := make([]cap.Point, cap.MaxPoints/2)
			for i := range ring {
				ring[i] = cap.Point{Lat: 45 + float64(i)/1e5, Lng: -122 + float64(i%2)/10}
			}
			in.Areas, in.Languages = []cap.AreaInput{{Description: "x", Polygons: [][]cap.Point{ring}}}, []string{"en-US", "es-US"}
		},
		"bad event code": func(in *cap.Input) { in.EventCode = "flood" },
		"empty area":     func(in *cap.Input) { in.Areas = []cap.AreaInput{{Description: "x"}} },
	}
	for name, change := range cases {
		in := base()
		change(&in)
		if _, err := cap.Build(in); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

func TestWEAText(t *testing.T) {
	long := strings.Repeat("Evacuate the valley now. ", 30)
	for _, limit := range []int{cap.WEATextLimit, cap.WEALongTextLimit} {
		got := cap.WEAText(long, limit)
		if n := utf8.RuneCountInString(got); n > limit || n < limit*2/3 || strings.HasSuffix(got, " ") {
			t.Errorf("limit %d: %d characters %q", limit, n, got)
		}
	}
	if got := cap.WEAText("  short\n text ", 90); got != "short text" {
		t.Errorf("%q", got)
	}
}

type objects map[string][]byte

func (o objects) Read(_ context.Context, key string) ([]byte, string, error) {
	return o[key], "audio/x-wav", nil
}

func TestEASAndMobileBroadcastDelivery(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	ctx := context.Background()
	tenant := stacktest.NewTenant()
	srv := captest.New(t, "cap-token")
	log := &cap.Messages{DB: db}
	audio := []byte("RIFF....WAVEfmt EAS header tones and message")
	in := base()
	in.Identifier, in.Sent, in.Expires, in.Description = "", time.Time{}, time.Now().Add(time.Hour), ""
	long := strings.Repeat("The river is rising fast; move to higher ground. ", 12)
	opts := cap.Options{Input: in, AudioKey: "tenants/x/eas.wav"}

	eas := &cap.Sender{Endpoint: providerhttp.Endpoint{URL: srv.URL + "/cap", Token: "cap-token", Client: providerhttp.NewClient(0, 0)}, Channel: channels.Eas, Objects: objects{"tenants/x/eas.wav": audio}, Log: log}
	wea := &cap.Sender{Endpoint: providerhttp.Endpoint{URL: srv.URL + "/cap", Token: "cap-token", Client: providerhttp.NewClient(0, 0)}, Channel: channels.MobileBroadcast, Log: log}
	for _, s := range []*cap.Sender{eas, wea} {
		res, err := s.Send(ctx, []channels.Message{{Key: "alert-42", Tenant: tenant, Subject: "Flash flood", Text: long, AlertID: 42, Options: opts}})
		if err != nil || res[0].Outcome != channels.Sent {
			t.Fatalf("%+v %v", res, err)
		}
		opts = cap.Options{Input: in}
	}
	docs := srv.Documents()
	if len(docs) != 2 || len(srv.Problems()) != 0 {
		t.Fatalf("documents %d problems %v", len(docs), srv.Problems())
	}
	for _, d := range docs {
		if err := captest.Validate(t, d); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
	}
	a, _ := cap.Parse(docs[0])
	info := a.Info[0]
	if len(info.Resource) != 1 || info.Resource[0].Size != int64(len(audio)) {
		t.Fatalf("EAS audio resource %+v", info.Resource)
	}
	sum := sha1.Sum(audio) //nolint:gosec
	if info.Resource[0].Digest != hex.EncodeToString(sum[:]) || info.Resource[0].DerefURI != base64.StdEncoding.EncodeToString(audio) {
		t.Fatal("the EAS audio is not embedded with its digest")
	}
	if info.EventCode[0].Value != "FFW" || info.Parameter[len(info.Parameter)-1].ValueName != "EAS-ORG" {
		t.Fatalf("EAS codes %+v %+v", info.EventCode, info.Parameter)
	}
	b, _ := cap.Parse(docs[1])
	params := map[string]string{}
	for _, p := range b.Info[0].Parameter {
		params[p.ValueName] = p.Value
	}
	if n := utf8.RuneCountInString(params["CMAMtext"]); n == 0 || n > cap.WEATextLimit {
		t.Fatalf("CMAMtext has %d characters", n)
	}
	if n := utf8.RuneCountInString(params["CMAMlongtext"]); n <= cap.WEATextLimit || n > cap.WEALongTextLimit {
		t.Fatalf("CMAMlongtext has %d characters", n)
	}
	if len(b.Info[0].Resource) != 0 || a.Identifier == b.Identifier {
		t.Fatal("mobile broadcast carries no audio and has its own identifier")
	}
	msgs, err := log.ForAlert(ctx, tenant, 42, channels.Eas)
	if err != nil || len(msgs) != 1 || msgs[0].Status != "Sent" || msgs[0].MsgType != "Alert" {
		t.Fatalf("logged %+v %v", msgs, err)
	}
}

// TestInputOfTheAlertsSettings: the document input of an alert's EAS and
// mobile broadcast messages expires as the channel's settings say (60
// minutes when they do not), and mobile broadcast has one info block per
// language, the block's own first.
func TestInputOfTheAlertsSettings(t *testing.T) {
	cases := []struct {
		ch      channels.Channel
		s       alert.Settings
		minutes float64
		langs   []string
	}{
		{channels.MobileBroadcast, alert.Settings{}, 60, []string{"en-US"}},
		{channels.MobileBroadcast, alert.Settings{MobileBroadcast: &alert.MobileBroadcastSettings{ExpiresInMinutes: 15}}, 15, []string{"en-US"}},
		{channels.MobileBroadcast, alert.Settings{MobileBroadcast: &alert.MobileBroadcastSettings{ExpiresInMinutes: 720, Languages: []string{"es-US", "vi"}},
			Channels: &alert.Channels{MobileBroadcast: &alert.MobileBroadcastChannel{Enabled: true, Language: "en-GB"}}}, 720, []string{"en-GB", "es-US", "vi"}},
		{channels.Eas, alert.Settings{MobileBroadcast: &alert.MobileBroadcastSettings{ExpiresInMinutes: 15, Languages: []string{"es-US"}}}, 60, []string{"en-US"}},
		{channels.Eas, alert.Settings{Channels: &alert.Channels{Eas: &alert.EasChannel{Enabled: true, DurationMinutes: 30}}}, 30, []string{"en-US"}},
	}
	for i, c := range cases {
		c.s.Message = alert.MessageSettings{Subject: "Tsunami warning", Body: "Go inland"}
		r, err := alert.NewRenderer("7", 42, &c.s, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := r.Message(string(c.ch), &alert.Recipient{}, "")
		in := cap.InputOf(r, &m)
		in.Identifier, in.Sender = "tocsin-7-42", "tocsin"
		if in.Sent.IsZero() { // as the Sender sets it
			in.Sent = time.Now().Truncate(time.Second)
		}
		a, err := cap.Build(in)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(a.Info) != len(c.langs) {
			t.Fatalf("case %d: %d info blocks, want %v", i, len(a.Info), c.langs)
		}
		sent, _ := time.Parse(cap.TimeLayout, a.Sent)
		for j, info := range a.Info {
			expires, err := time.Parse(cap.TimeLayout, info.Expires)
			if err != nil || expires.Sub(sent).Minutes() != c.minutes || info.Language != c.langs[j] {
				t.Errorf("case %d block %d: %s, sent %s, expires %s; want %s, %v minutes", i, j, info.Language, a.Sent, info.Expires, c.langs[j], c.minutes)
			}
		}
	}
}
