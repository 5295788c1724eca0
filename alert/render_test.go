package alert

import (
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/alertmsg"
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
		m, _ := r.Message(ch, ada, "")
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

// TestTextFitsItsSegments: a recipient whose values make the text longer
// than maxSegments gets it shortened, the response link whole after the
// cut body; a recipient whose text fits gets it as written.
func TestTextFitsItsSegments(t *testing.T) {
	link := "https://t.example/s/ABCDEFGH"
	long := &Recipient{FirstName: "Ada", CustomFields: []byte(`{"building":"` + strings.Repeat("Hall ", 60) + `"}`)}
	short := &Recipient{FirstName: "Alan", CustomFields: []byte(`{"building":"B12"}`)}
	for _, c := range []struct {
		name, body, end string
	}{
		{"link appended", "Hello {{firstName}}, go to {{custom.building}}.", "...\n\nPlease confirm: " + link},
		{"link in the body", "Hello {{firstName}}, go to {{custom.building}}. Details: {{responseLink}}", "... " + link},
	} {
		s := &Settings{
			Message:  MessageSettings{Subject: "Storm", Body: c.body},
			Channels: &Channels{Text: &TextMessageChannel{Enabled: true, MaxSegments: 2}},
			Workflow: &WorkflowSettings{ConfirmationRequested: true},
		}
		r, err := NewRenderer("7", 42, s, "https://t.example", []byte("k"))
		if err != nil {
			t.Fatal(err)
		}
		m, written := r.Message("text", long, link)
		if _, _, n := alertmsg.SMSInfo(m.Text); n > 2 || m.Text == written || !strings.HasPrefix(m.Text, "Hello Ada, go to Hall Hall") || !strings.HasSuffix(m.Text, c.end) {
			t.Errorf("%s: %d segments: %q", c.name, n, m.Text)
		}
		if _, _, n := alertmsg.SMSInfo(written); n <= 2 || !strings.Contains(written, strings.Repeat("Hall ", 60)) {
			t.Errorf("%s: written %q", c.name, written)
		}
		if m, written := r.Message("text", short, link); m.Text != written || !strings.HasPrefix(m.Text, "Hello Alan, go to B12.") || !strings.Contains(m.Text, link) {
			t.Errorf("%s: a text that fits became %q (written %q)", c.name, m.Text, written)
		}
		// Other channels are not shortened.
		if m, written := r.Message("email", long, link); m.Text != written || !strings.Contains(m.Text, strings.Repeat("Hall ", 60)) {
			t.Errorf("%s: email %q", c.name, m.Text)
		}
	}
}

// TestTextIsGSM7WhenUnicodeIsNotAllowed: with allowUnicode false the
// recipient's own values are made GSM-7 in their text (alone: other
// channels and allowUnicode absent keep them), and the text then fits its
// segments as GSM-7.
func TestTextIsGSM7WhenUnicodeIsNotAllowed(t *testing.T) {
	zoe := &Recipient{FirstName: "Zoë😀", LastName: "Ŝmith", CustomFields: []byte(`{"x":"Bâtiment ж"}`)}
	long := &Recipient{FirstName: "Zoë", CustomFields: []byte(`{"x":"` + strings.Repeat("ж", 100) + `"}`)}
	for _, allow := range []*bool{nil, new(bool)} {
		s := &Settings{
			Message:  MessageSettings{Subject: "Storm", Body: "Hi {{fullName}} ({{firstName}}) at {{custom.x}}."},
			Channels: &Channels{Text: &TextMessageChannel{Enabled: true, MaxSegments: 1, AllowUnicode: allow}},
		}
		r, err := NewRenderer("7", 42, s, "https://t.example", []byte("k"))
		if err != nil {
			t.Fatal(err)
		}
		const asIs = "Hi Zoë😀 Ŝmith (Zoë😀) at Bâtiment ж."
		want := asIs
		if allow != nil {
			want = "Hi Zoe? Smith (Zoe?) at Batiment ?."
		}
		if m, written := r.Message("text", zoe, ""); m.Text != want || written != want {
			t.Errorf("GSM-7 only %v: %q (written %q), want %q", allow != nil, m.Text, written, want)
		}
		if m, _ := r.Message("email", zoe, ""); m.Text != asIs {
			t.Errorf("GSM-7 only %v: email %q", allow != nil, m.Text)
		}
		// 100 characters of the custom field: 100 septets fit one GSM-7
		// segment, 100 UCS-2 units do not.
		m, written := r.Message("text", long, "")
		if enc, _, n := alertmsg.SMSInfo(m.Text); allow != nil && (enc != alertmsg.GSM7 || n != 1 || m.Text != written || !strings.Contains(m.Text, strings.Repeat("?", 100))) {
			t.Errorf("GSM-7 only: %s %d segments: %q", enc, n, m.Text)
		} else if allow == nil && (enc != alertmsg.UCS2 || !strings.HasSuffix(m.Text, alertmsg.Ellipsis)) {
			t.Errorf("unicode allowed: %s %q", enc, m.Text)
		}
	}
}

// TestCustomFieldsAreTheOnesTheTextsRead: the custom fields a renderer
// lists are those of {{custom.<key>}} in any text, a channel's own
// included, and of the CustomField variables a text uses; not those of a
// variable no text uses, nor any other variable.
func TestCustomFieldsAreTheOnesTheTextsRead(t *testing.T) {
	s := &Settings{
		Message: MessageSettings{Subject: "{{custom.zone}} {{firstName}}", Body: "Go to {{hall}}",
			Variables: &Variables{Values: []Variable{
				{Name: "hall", Source: VariableCustomField, Field: "building", Value: "the hall"},
				{Name: "unused", Source: VariableCustomField, Field: "floor"},
				{Name: "static", Value: "x"},
			}}},
		Channels: &Channels{
			Voice: &VoiceChannel{Enabled: true, Message: "{{custom.desk}} {{static}}"},
			Push:  &PushChannel{Enabled: true, Title: "{{custom.zone}}"},
		},
	}
	r, err := NewRenderer("7", 42, s, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.CustomFields(), ","); got != "building,desk,zone" {
		t.Fatalf("custom fields %s", got)
	}
	r, _ = NewRenderer("7", 42, &Settings{Message: MessageSettings{Body: "Hello {{firstName}}"}}, "", nil)
	if got := r.CustomFields(); len(got) != 0 {
		t.Fatalf("custom fields %v", got)
	}
}
