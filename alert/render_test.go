package alert

import (
	"strings"
	"testing"
)

// TestChannelTextsAreRendered: every channel block's own text reaches the
// message with its variables filled, per recipient where there is one.
func TestChannelTextsAreRendered(t *testing.T) {
	s := &Settings{
		Message: MessageSettings{Subject: "Storm {{alertId}}", Body: "Hello {{firstName}}"},
		Channels: &Channels{
			Etn:             &EtnChannel{Enabled: true, Message: "Call for {{firstName}} about alert {{alertId}}."},
			Push:            &PushChannel{Enabled: true, Title: "Push {{subject}}", Body: "Push body for {{firstName}}"},
			MyAlertsApp:     &MyAlertsAppChannel{Enabled: true, Body: "App body for {{firstName}}"},
			MobileBroadcast: &MobileBroadcastChannel{Enabled: true, Text: "Broadcast {{alertId}}"},
			TeamChat:        &TeamChatChannel{Enabled: true, Message: "Chat {{alertId}}"},
			SocialPostA:     &SocialPostChannelA{Enabled: true, Message: "Post {{alertId}}"},
			Neighborhood:    &NeighborhoodChannel{Enabled: true, Message: "Neighbors {{alertId}}"},
		},
	}
	r, err := NewRenderer("7", 42, s, "http://x", []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	ada := &Recipient{FirstName: "Ada"}
	want := map[string][2]string{ // channel: subject, text
		"etn":             {"Storm 42", "Call for Ada about alert 42."},
		"push":            {"Push Storm 42", "Push body for Ada"},
		"myAlertsApp":     {"Storm 42", "App body for Ada"},
		"mobileBroadcast": {"Storm 42", "Hello Ada"},
		"teamChat":        {"Storm 42", "Chat 42"},
		"socialPostA":     {"Storm 42", "Post 42"},
		"neighborhood":    {"Storm 42", "Neighbors 42"},
		"fax":             {"Storm 42", "Hello Ada"},
	}
	for ch, w := range want {
		m := r.Message(ch, ada, "")
		if m.Subject != w[0] || m.Text != w[1] {
			t.Errorf("%s: %q / %q, want %q / %q", ch, m.Subject, m.Text, w[0], w[1])
		}
		if strings.Contains(m.Text+m.Subject, "{{") {
			t.Errorf("%s: unfilled variable in %q", ch, m.Text)
		}
	}

	// The mobile broadcast's own text is its broadcast text.
	if got := r.BroadcastText(); got != "Broadcast 42" {
		t.Errorf("broadcast text %q, want %q", got, "Broadcast 42")
	}

	// An unknown variable in a block's text is refused, naming the field.
	s.Channels.MyAlertsApp.Body = "App {{nope}}"
	_, err = NewRenderer("7", 42, s, "", nil)
	if fe, ok := err.(*FieldError); !ok || fe.Field != "settings.channels.myAlertsApp.body" {
		t.Fatalf("unknown variable: %v", err)
	}
}
