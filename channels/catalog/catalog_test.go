package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/neighborhood"
	"github.com/tocsin/tocsin/channels/push"
	"github.com/tocsin/tocsin/channels/sms"
	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/channels/teamchat"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/storage"
)

var all = []channels.Channel{channels.Email, channels.Text, channels.Voice, channels.Etn, channels.Push, channels.MyAlertsApp,
	channels.Fax, channels.Eas, channels.MobileBroadcast, channels.TeamChat, channels.SocialPostA, channels.SocialPostB, channels.Neighborhood}

// TestEveryChannelIsDescribed: the table has each channel once, under its
// own name.
func TestEveryChannelIsDescribed(t *testing.T) {
	if len(table) != len(all) {
		t.Errorf("%d entries for %d channels", len(table), len(all))
	}
	for _, ch := range all {
		e, ok := table[ch]
		if !ok || e.Channel != ch {
			t.Errorf("%s: %+v", ch, e.Descriptor)
		}
	}
}

// TestAddressing: every channel is addressed in a way its descriptor can
// deliver (a channel missing from channels' table would be PerRecipient
// without addresses). alert.AddressOf and alert.IsBroadcast read the same
// table, so they agree with the descriptors.
func TestAddressing(t *testing.T) {
	for _, ch := range all {
		d := For(ch)
		if (d.Addressing() == channels.PerDevice) != (d.Addresses() == channels.DeviceTokens && d.App != "") {
			t.Errorf("%s: PerDevice needs device tokens of an app: %+v", ch, d)
		}
		if (d.Addressing() == channels.PerDestination) != (d.Addresses() == channels.NoAddresses) {
			t.Errorf("%s: only destinations have no addresses: %d, %d", ch, d.Addressing(), d.Addresses())
		}
	}
}

// TestOptions: each channel's message carries its block's settings and
// the alert's that concern it (the sender, the message's language, social
// media), its text left as rendered, and an alert without channel blocks
// adds none.
func TestOptions(t *testing.T) {
	s := &alert.Settings{
		Message:     alert.MessageSettings{Subject: "Storm", Body: "Take cover", Language: "es-US"},
		Priority:    &alert.PrioritySettings{Priority: alert.PriorityEmergency, LoudTone: &alert.LoudToneSettings{Sound: "Chime", DurationSeconds: 30}},
		Content:     &alert.ContentSettings{Link: "https://example.com/storm"},
		Sender:      &alert.SenderSettings{Name: "County OEM", ReplyTo: "oem@example.com", CallerID: "+15550100"},
		SocialMedia: &alert.SocialMediaSettings{Hashtags: []string{"storm", "#CountyOEM"}},
		Channels: &alert.Channels{
			Email:        &alert.EmailChannel{Enabled: true, ReplyTo: "desk@example.com"},
			Text:         &alert.TextMessageChannel{Enabled: true},
			Voice:        &alert.VoiceChannel{Enabled: true, Repeat: 3, PressOneToConfirm: true, AudioFileName: "siren.wav", Language: "en-GB"},
			Etn:          &alert.EtnChannel{Enabled: true, CallerID: "+15550199"},
			Push:         &alert.PushChannel{Enabled: true, LoudTone: true},
			SocialPostA:  &alert.SocialPostChannelA{Enabled: true, IncludeLink: true},
			SocialPostB:  &alert.SocialPostChannelB{Enabled: true},
			Neighborhood: &alert.NeighborhoodChannel{Enabled: true, Groups: []string{"g1", "g2"}},
		},
	}
	r, err := alert.NewRenderer("7", 42, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	files := func(use, name string) string {
		if name == "" {
			return ""
		}
		return "t/7/" + use + "/" + name
	}
	tags := []string{"#storm", "#CountyOEM"}
	for _, c := range []struct {
		ch   channels.Channel
		want any
	}{
		{channels.Email, email.Options{FromName: "County OEM", ReplyTo: "desk@example.com"}},
		{channels.Text, sms.Options{From: "+15550100"}},
		{channels.Voice, voice.Options{Repeat: 3, Confirm: true, AudioKey: "t/7/voice/siren.wav", AudioFile: "siren.wav", Language: "en-GB", CallerID: "+15550100"}},
		{channels.Etn, voice.Options{Language: "es-US", CallerID: "+15550199"}},
		{channels.Push, push.Options{Emergency: true, LoudTone: true, Sound: "chime.caf", ToneSeconds: 30}},
		{channels.MyAlertsApp, push.Options{Emergency: true}},
		{channels.TeamChat, teamchat.Options{Urgent: true}},
		{channels.SocialPostA, social.Options{Link: "https://example.com/storm", Hashtags: tags}},
		{channels.SocialPostB, social.Options{Hashtags: tags}},
		{channels.Neighborhood, neighborhood.Options{Groups: []string{"g1", "g2"}, Urgent: true}},
	} {
		m, _ := r.Message(string(c.ch), &alert.Recipient{}, "")
		text := m.Text
		For(c.ch).Apply(r, files, &m)
		if !reflect.DeepEqual(m.Options, c.want) {
			t.Errorf("%s: options %+v, want %+v", c.ch, m.Options, c.want)
		}
		if m.AlertID != 42 {
			t.Errorf("%s: alert id %d", c.ch, m.AlertID)
		}
		if m.Text != text {
			t.Errorf("%s: text %q, rendered %q", c.ch, m.Text, text)
		}
	}
	bare, err := alert.NewRenderer("7", 42, &alert.Settings{Message: s.Message, Priority: s.Priority}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := bare.Message(string(channels.Push), &alert.Recipient{}, "")
	For(channels.Push).Apply(bare, files, &m)
	if m.Options != nil {
		t.Errorf("an alert without channel blocks got push options: %+v", m.Options)
	}
}

// TestNamedFiles: the stored files the channel blocks name, with the field
// that names each and the version its channel uses.
func TestNamedFiles(t *testing.T) {
	got := NamedFiles(&alert.Channels{
		Voice: &alert.VoiceChannel{AudioFileName: "a.wav"}, Etn: &alert.EtnChannel{AudioFileName: "b.wav"},
		Eas: &alert.EasChannel{AudioFileName: "c.wav"}, Fax: &alert.FaxChannel{FileName: "d.pdf"},
		MobileBroadcast: &alert.MobileBroadcastChannel{}, Push: &alert.PushChannel{},
	})
	want := []NamedFile{
		{"channels.voice.audioFileName", alert.FileVoice, "a.wav"}, {"channels.etn.audioFileName", alert.FileVoice, "b.wav"},
		{"channels.fax.fileName", alert.FileDocument, "d.pdf"}, {"channels.eas.audioFileName", alert.FileEas, "c.wav"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	if len(NamedFiles(nil)) != 0 || len(NamedFiles(&alert.Channels{Voice: &alert.VoiceChannel{Enabled: true}})) != 0 {
		t.Error("no file names, files")
	}
}

// TestResolve: a stored file serves a channel by its full name or its
// unique short name, when it is of the channel's kind and has the version
// the channel uses; otherwise the error says why.
func TestResolve(t *testing.T) {
	assets := []storage.FileAsset{
		{FullName: "sirens/tone.wav", FileName: "tone.wav", FileID: 1, FileKind: "audio", Kind: "original", ContentType: "audio/wav", Key: "k1o"},
		{FullName: "sirens/tone.wav", FileName: "tone.wav", FileID: 1, FileKind: "audio", Kind: "voice", ContentType: "audio/wav", Key: "k1v"},
		{FullName: "alarms/tone.wav", FileName: "tone.wav", FileID: 2, FileKind: "audio", Kind: "original", ContentType: "audio/wav", Key: "k2o"},
		{FullName: "alarms/tone.wav", FileName: "tone.wav", FileID: 2, FileKind: "audio", Kind: "eas", ContentType: "audio/wav", Key: "k2e"},
		{FullName: "logo.png", FileName: "logo.png", FileID: 3, FileKind: "image", Kind: "original", ContentType: "image/png", Key: "k3o"},
		{FullName: "a/logo.png", FileName: "logo.png", FileID: 4, FileKind: "image", Kind: "original", ContentType: "image/png", Key: "k4o"},
	}
	for _, c := range []struct{ use, name, key, err string }{
		{alert.FileVoice, "sirens/tone.wav", "k1v", ""},
		{alert.FileVoice, "alarms/tone.wav", "k2o", ""},
		{alert.FileEas, "alarms/tone.wav", "k2e", ""},
		{alert.FileEas, "sirens/tone.wav", "", "no EAS version"},
		{alert.FileVoice, "tone.wav", "", "2 stored files are named tone.wav (alarms/tone.wav, sirens/tone.wav)"},
		{alert.FileVoice, "logo.png", "", "logo.png is an image file; a call plays audio files"},
		{alert.FileDocument, "a/logo.png", "", "a/logo.png is image/png; a fax sends application/pdf"},
		{alert.FileVoice, "nope.wav", "", "no stored file nope.wav"},
	} {
		key, err := Resolve(c.use, c.name, assets)
		if key != c.key || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s %s: %q, %v; want %q, %q", c.use, c.name, key, err, c.key, c.err)
		}
	}
}
