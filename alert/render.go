package alert

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/internal/alertmsg"
)

// FieldError is a problem with one field of an alert's settings; Field is
// its dotted path from the settings' parent (settings.message.body).
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Renderer renders an alert's messages per recipient and channel.
type Renderer struct {
	AlertID int64
	Tenant  string
	// Tag is the alert's tag (TagOf its stored workflow id), bound into its
	// response links; "" for alerts stored before tags came.
	Tag         string
	Settings    *Settings
	PublicURL   string
	LinkSecret  []byte
	Attachments []channels.Attachment

	static     map[string]string
	custom     map[string]Variable
	fields     map[string]bool // the custom fields the templates read
	templates  map[string]*alertmsg.Template
	needsLink  bool
	appendLink bool
}

// Template keys of a Renderer.
const (
	tplSubject   = "subject"
	tplBody      = "body"
	tplEmailSubj = "email.subject"
	tplEmailBody = "email.body"
	tplEmailHTML = "email.html"
	tplText      = "text"
	tplVoice     = "voice"
	tplEtn       = "etn"
	// Channel blocks' own texts: "<channel>.title" and "<channel>.body".
	titleSuffix = ".title"
	bodySuffix  = ".body"
)

// NewRenderer compiles the templates of an alert. Errors name the field.
func NewRenderer(tenant string, alertID int64, s *Settings, publicURL string, linkSecret []byte) (*Renderer, error) {
	r := &Renderer{AlertID: alertID, Tenant: tenant, Settings: s, PublicURL: strings.TrimRight(publicURL, "/"), LinkSecret: linkSecret,
		templates: map[string]*alertmsg.Template{}, custom: map[string]Variable{}, fields: map[string]bool{}}
	if s.Message.Variables != nil {
		for _, v := range s.Message.Variables.Values {
			r.custom[v.Name] = v
		}
	}
	r.static = map[string]string{
		"alertId": strconv.FormatInt(alertID, 10),
		"subject": s.Message.Subject,
	}
	if s.Sender != nil {
		r.static["senderName"] = s.Sender.Name
	}
	if s.Incident != nil {
		r.static["incidentName"] = s.Incident.Name
	}
	if s.Location != nil && s.Location.Location != nil {
		r.static["locationName"] = s.Location.Location.Name
	}
	if s.Content != nil {
		r.static["link"] = s.Content.Link
	}
	if s.Conference != nil {
		r.static["conference"] = ConferenceText(s.Conference)
	}
	add := func(key, field, text string) error {
		if text == "" {
			return nil
		}
		t, err := alertmsg.Compile(text)
		if err != nil {
			return &FieldError{Field: field, Message: err.Error()}
		}
		for _, name := range t.Variables() {
			if !r.known(name) {
				return &FieldError{Field: field, Message: fmt.Sprintf("unknown variable {{%s}}; use a built-in one (%s), custom.<field> or a custom variable",
					name, strings.Join(alertmsg.Builtin, ", "))}
			}
			if name == "responseLink" {
				r.needsLink = true
			}
			if f := r.customField(name); f != "" {
				r.fields[f] = true
			}
		}
		r.templates[key] = t
		return nil
	}
	m := s.Message
	checks := []struct{ key, field, text string }{
		{tplSubject, "settings.message.subject", m.Subject},
		{tplBody, "settings.message.body", m.Body},
	}
	if c := s.Channels; c != nil {
		if c.Email != nil {
			checks = append(checks,
				struct{ key, field, text string }{tplEmailSubj, "settings.channels.email.subject", c.Email.Subject},
				struct{ key, field, text string }{tplEmailBody, "settings.channels.email.body", c.Email.Body},
				struct{ key, field, text string }{tplEmailHTML, "settings.channels.email.html", c.Email.HTML})
		}
		if c.Text != nil {
			checks = append(checks, struct{ key, field, text string }{tplText, "settings.channels.text.body", c.Text.Body})
		}
		if c.Voice != nil {
			checks = append(checks, struct{ key, field, text string }{tplVoice, "settings.channels.voice.message", c.Voice.Message})
		}
		if c.Etn != nil {
			checks = append(checks, struct{ key, field, text string }{tplEtn, "settings.channels.etn.message", c.Etn.Message})
		}
		if c.Push != nil {
			checks = append(checks,
				struct{ key, field, text string }{"push" + titleSuffix, "settings.channels.push.title", c.Push.Title},
				struct{ key, field, text string }{"push" + bodySuffix, "settings.channels.push.body", c.Push.Body})
		}
		if c.MyAlertsApp != nil {
			checks = append(checks,
				struct{ key, field, text string }{"myAlertsApp" + titleSuffix, "settings.channels.myAlertsApp.title", c.MyAlertsApp.Title},
				struct{ key, field, text string }{"myAlertsApp" + bodySuffix, "settings.channels.myAlertsApp.body", c.MyAlertsApp.Body})
		}
		if c.MobileBroadcast != nil {
			checks = append(checks, struct{ key, field, text string }{"mobileBroadcast" + bodySuffix, "settings.channels.mobileBroadcast.text", c.MobileBroadcast.Text})
		}
		if c.TeamChat != nil {
			checks = append(checks, struct{ key, field, text string }{"teamChat" + bodySuffix, "settings.channels.teamChat.message", c.TeamChat.Message})
		}
		if c.SocialPostA != nil {
			checks = append(checks, struct{ key, field, text string }{"socialPostA" + bodySuffix, "settings.channels.socialPostA.message", c.SocialPostA.Message})
		}
		if c.SocialPostB != nil {
			checks = append(checks, struct{ key, field, text string }{"socialPostB" + bodySuffix, "settings.channels.socialPostB.message", c.SocialPostB.Message})
		}
		if c.Neighborhood != nil {
			checks = append(checks, struct{ key, field, text string }{"neighborhood" + bodySuffix, "settings.channels.neighborhood.message", c.Neighborhood.Message})
		}
	}
	for _, c := range checks {
		if err := add(c.key, c.field, c.text); err != nil {
			return nil, err
		}
	}
	if s.Type == TypePoll || (s.Workflow != nil && s.Workflow.ConfirmationRequested) {
		r.needsLink = true
		r.appendLink = true
	}
	return r, nil
}

// ConferenceText describes a conference call in one line.
func ConferenceText(c *ConferenceInvitation) string {
	parts := []string{"Join the call: " + c.BridgeNumber}
	if c.AccessCode != "" {
		parts = append(parts, "code "+c.AccessCode)
	}
	if c.URL != "" {
		parts = append(parts, c.URL)
	}
	if c.StartsAt != nil {
		parts = append(parts, "at "+c.StartsAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	return strings.Join(parts, ", ")
}

func (r *Renderer) known(name string) bool {
	for _, b := range alertmsg.Builtin {
		if b == name {
			return true
		}
	}
	if _, ok := r.custom[name]; ok {
		return true
	}
	return strings.HasPrefix(name, "custom.") && len(name) > len("custom.")
}

// customField is the custom field variable name reads ("" for none): a
// CustomField variable's field, or the key of custom.<key>.
func (r *Renderer) customField(name string) string {
	if v, ok := r.custom[name]; ok {
		if v.Source == VariableCustomField {
			return v.Field
		}
		return ""
	}
	if key, ok := strings.CutPrefix(name, "custom."); ok {
		return key
	}
	return ""
}

// CustomFields lists, sorted, the custom fields (their keys) the alert's
// texts read: the only ones of a recipient that rendering needs.
func (r *Renderer) CustomFields() []string {
	return slices.Sorted(maps.Keys(r.fields))
}

// NeedsLink reports whether messages carry the recipient's response link.
func (r *Renderer) NeedsLink() bool { return r.needsLink }

// SampleLink stands for a recipient's response link where none is made
// (the size check at submission, previews): a short link of the real
// length, as messages carry it, with X's for its code; "" when messages
// carry no link.
func (r *Renderer) SampleLink() string {
	if !r.needsLink {
		return ""
	}
	return alertmsg.SampleShortLink(r.PublicURL)
}

// ResponseLink is the recipient's personal response page.
func (r *Renderer) ResponseLink(seq int64) string {
	return r.PublicURL + alertmsg.ResponsePath + alertmsg.ResponseToken(r.LinkSecret, r.Tenant, r.AlertID, seq, r.Tag)
}

// lookup fills variables for rec. With gsm7 the recipient's own values
// are made GSM-7 (alertmsg.ToGSM7); the alert's own values are left as
// they are, as submission checks them.
func (r *Renderer) lookup(rec *Recipient, link string, gsm7 bool) func(string) string {
	own := func(v string) string {
		if gsm7 {
			return alertmsg.ToGSM7(v)
		}
		return v
	}
	var custom map[string]any
	var look func(string) string
	look = func(name string) string {
		switch name {
		case "subject":
			// The subject with its own variables filled.
			if t, ok := r.templates[tplSubject]; ok && !t.Uses("subject") {
				return t.Render(look)
			}
		case "firstName":
			return own(rec.FirstName)
		case "lastName":
			return own(rec.LastName)
		case "fullName":
			return own(strings.TrimSpace(rec.FirstName + " " + rec.LastName))
		case "email":
			return own(deref(rec.Email))
		case "phone":
			if rec.Phone != nil {
				return own(*rec.Phone)
			}
			return own(deref(rec.VoicePhone))
		case "externalId":
			return own(rec.ExternalID)
		case "responseLink":
			return link
		}
		if v, ok := r.static[name]; ok {
			return v
		}
		field := r.customField(name)
		fallback := ""
		if v, ok := r.custom[name]; ok {
			if v.Source != VariableCustomField {
				return v.Value
			}
			fallback = v.Value
		}
		if field == "" {
			return fallback
		}
		if custom == nil {
			custom = map[string]any{}
			if len(rec.CustomFields) > 0 {
				_ = json.Unmarshal(rec.CustomFields, &custom)
			}
		}
		switch v := custom[field].(type) {
		case nil:
			return fallback
		case string:
			return own(v)
		default:
			b, _ := json.Marshal(v)
			return own(string(b))
		}
	}
	return look
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (r *Renderer) render(key, fallback string, look func(string) string) string {
	if t, ok := r.templates[key]; ok {
		return t.Render(look)
	}
	if t, ok := r.templates[fallback]; ok {
		return t.Render(look)
	}
	return ""
}

// Message renders the message of one channel for one recipient. link is
// the recipient's response link ("" when not needed). In a text message of
// an alert whose TextGSM7Only, the recipient's own values are made GSM-7
// (alertmsg.ToGSM7); submission holds the rest to GSM-7. A text message that
// takes more than the alert's TextSegments is shortened to fit
// (alertmsg.FitSMS: the body is cut and ends in "...", the conference line
// and the response link stay whole); written is the text before that, the
// same as m.Text on every other message.
func (r *Renderer) Message(ch string, rec *Recipient, link string) (m channels.Message, written string) {
	return r.message(ch, r.lookup(rec, link, ch == string(channels.Text) && r.Settings.TextGSM7Only()), link)
}

// Unfilled is the message of channel ch as Message makes it, but with
// every variable left as it is written ({{firstName}}, the response link
// as {{responseLink}}): what an alert's details show when they are asked
// not to fill the variables.
func (r *Renderer) Unfilled(ch string) channels.Message {
	const link = "{{responseLink}}"
	m, _ := r.message(ch, func(name string) string { return "{{" + name + "}}" }, link)
	return m
}

// message is Message with the variables filled by look.
func (r *Renderer) message(ch string, look func(string) string, link string) (m channels.Message, written string) {
	m = channels.Message{Tenant: r.Tenant, Channel: channels.Channel(ch), AlertID: r.AlertID}
	s := r.Settings
	extra := r.extraLines(link, r.templateUses(ch, "responseLink"))
	switch ch {
	case string(channels.Email):
		m.Subject = r.render(tplEmailSubj, tplSubject, look)
		m.Text = r.render(tplEmailBody, tplBody, look) + extra
		if t, ok := r.templates[tplEmailHTML]; ok {
			m.HTML = t.RenderHTML(look)
			if extra != "" {
				m.HTML += "<p>" + strings.ReplaceAll(htmlEscape(strings.TrimSpace(extra)), "\n", "<br>") + "</p>"
			}
		}
		if r.Attaches(ch) {
			m.Attachments = r.Attachments
		}
	case string(channels.Text):
		body := r.render(tplText, tplBody, look)
		m.Text, _ = alertmsg.FitSMS(body, extra, s.TextSegments(), link)
		return m, body + extra
	case string(channels.Voice), string(channels.Etn):
		m.Subject = r.render(tplSubject, "", look)
		if ch == string(channels.Etn) {
			m.Text = r.render(tplEtn, tplBody, look)
		} else {
			m.Text = r.render(tplVoice, tplBody, look)
		}
		if s.Conference != nil {
			m.Text += "\n" + ConferenceText(s.Conference)
		}
	case string(channels.MobileBroadcast):
		// The CAP document's headline and description; the broadcast text
		// itself is BroadcastText.
		m.Subject = r.render(tplSubject, "", look)
		m.Text = r.render(tplBody, "", look) + extra
	default:
		// Every other channel: the block's own title and text when it has
		// them, else the message's; variables filled the same way.
		m.Subject = r.render(ch+titleSuffix, tplSubject, look)
		if _, own := r.templates[ch+bodySuffix]; own {
			m.Text = r.render(ch+bodySuffix, "", look)
		} else {
			m.Text = r.render(tplBody, "", look) + extra
		}
	}
	return m, m.Text
}

// Attaches reports whether the messages of channel ch carry the alert's
// attachments: email does unless channels.email.includeAttachments is false.
func (r *Renderer) Attaches(ch string) bool {
	if ch != string(channels.Email) {
		return false
	}
	c := r.Settings.Channels
	return c == nil || c.Email == nil || c.Email.IncludeAttachments == nil || *c.Email.IncludeAttachments
}

// BroadcastText is the mobile broadcast's own text with its variables
// filled ("" when the block has none).
func (r *Renderer) BroadcastText() string {
	return r.render(string(channels.MobileBroadcast)+bodySuffix, "", r.lookup(&Recipient{}, "", false))
}

func (r *Renderer) templateUses(ch, name string) bool {
	keys := []string{tplBody}
	switch ch {
	case string(channels.Email):
		keys = []string{tplEmailBody, tplBody}
		if _, ok := r.templates[tplEmailBody]; ok {
			keys = []string{tplEmailBody}
		}
	case string(channels.Text):
		if _, ok := r.templates[tplText]; ok {
			keys = []string{tplText}
		}
	}
	for _, k := range keys {
		if t, ok := r.templates[k]; ok && t.Uses(name) {
			return true
		}
	}
	return false
}

// extraLines are appended to texts: the conference (when the template does
// not show it) and the response link of polls and confirmations.
func (r *Renderer) extraLines(link string, linkInTemplate bool) string {
	var b strings.Builder
	s := r.Settings
	if s.Conference != nil && !r.anyUses("conference") {
		b.WriteString("\n\n" + ConferenceText(s.Conference))
	}
	if r.appendLink && link != "" && !linkInTemplate {
		label := "Please confirm: "
		if s.Type == TypePoll {
			label = "Answer here: "
		}
		b.WriteString("\n\n" + label + link)
	}
	return b.String()
}

func (r *Renderer) anyUses(name string) bool {
	for _, t := range r.templates {
		if t.Uses(name) {
			return true
		}
	}
	return false
}

func htmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
