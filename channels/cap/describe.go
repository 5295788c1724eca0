package cap

import (
	"time"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// EasDescriptor and BroadcastDescriptor describe the CAP channels: one
// document per alert to the tenant's CAP endpoint.
var (
	EasDescriptor       = channels.Descriptor{Channel: channels.Eas}
	BroadcastDescriptor = channels.Descriptor{Channel: channels.MobileBroadcast}
)

// Channels are the CAP channels, in the order updates go out on them.
var Channels = []channels.Channel{channels.Eas, channels.MobileBroadcast}

// FromAlert sets m's Options: the CAP document input of m (InputOf) and
// the EAS audio file. For mobile broadcast, the block's own text (rendered
// by alert.Renderer.BroadcastText) becomes the text sent.
func FromAlert(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	o := Options{Input: InputOf(r, m)}
	c := r.Settings.Channels
	if m.Channel == channels.Eas && c.Eas != nil {
		o.AudioKey, o.AudioFile = files(alert.FileEas, c.Eas.AudioFileName), c.Eas.AudioFileName
	}
	m.Options = o
	if m.Channel == channels.MobileBroadcast {
		if t := r.BroadcastText(); t != "" {
			m.Text = t
		}
	}
}

// EasFile is the stored EAS-encoded audio file the alert's EAS block
// embeds in its document.
func EasFile(c *alert.Channels) (use, name string) {
	if c.Eas == nil {
		return "", ""
	}
	return alert.FileEas, c.Eas.AudioFileName
}

// InputOf is the CAP document input of an EAS or mobile broadcast message
// m of the alert r renders.
func InputOf(r *alert.Renderer, m *channels.Message) Input {
	s := r.Settings
	in := Input{Status: "Actual", MsgType: "Alert", Scope: "Public",
		Classification: Classification{Category: []string{"Safety"}, Event: m.Subject, Urgency: "Expected", Severity: "Moderate", Certainty: "Likely"},
		Wording:        Wording{Headline: m.Subject, Description: m.Text}}
	if in.Event == "" {
		in.Event = "Alert"
	}
	if s.Emergency() {
		in.Urgency, in.Severity, in.Certainty = "Immediate", "Severe", "Observed"
	}
	minutes := 60
	area := AreaInput{Description: "Alert area"}
	if s.Location != nil && s.Location.Location != nil && s.Location.Location.Name != "" {
		area.Description = s.Location.Location.Name
	}
	if c := s.Channels; c != nil && m.Channel == channels.Eas && c.Eas != nil {
		in.EventCode = c.Eas.EventCode
		if c.Eas.DurationMinutes > 0 {
			minutes = c.Eas.DurationMinutes
		}
		area.SAME = c.Eas.SameCodes
	}
	if c := s.Channels; c != nil && m.Channel == channels.MobileBroadcast && c.MobileBroadcast != nil && c.MobileBroadcast.Language != "" {
		in.Language = c.MobileBroadcast.Language
	}
	if len(area.SAME) == 0 {
		area.Geocodes = []NamedValue{{ValueName: "tocsin-tenant", Value: r.Tenant}}
	}
	in.Areas = []AreaInput{area}
	in.Expires = time.Now().Add(time.Duration(minutes) * time.Minute).Truncate(time.Second)
	return in
}
