package cap

import (
	"fmt"
	"strings"
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

// DefaultMinutes is how long a document is valid when the alert does not
// say: its expires is its sent time plus this.
const DefaultMinutes = 60

// InputOf is the CAP document input of an EAS or mobile broadcast message
// m of the alert r renders, sent now: its areas (AreasOf), its expiry
// (channels.eas.durationMinutes for EAS, mobileBroadcast.expiresInMinutes
// for mobile broadcast, DefaultMinutes when not given) and, for mobile
// broadcast, one info block per language: channels.mobileBroadcast.language
// (en-US when empty), then each of mobileBroadcast.languages, all with the
// same texts.
func InputOf(r *alert.Renderer, m *channels.Message) Input {
	s := r.Settings
	in := Input{Status: "Actual", MsgType: "Alert", Scope: "Public",
		Classification: Classification{Category: []string{"Safety"}, Event: m.Subject, Urgency: "Expected", Severity: "Moderate", Certainty: "Likely"},
		Wording:        Wording{Headline: m.Subject, Description: m.Text},
		Areas:          AreasOf(r.Tenant, s, m.Channel)}
	if in.Event == "" {
		in.Event = "Alert"
	}
	if s.Emergency() {
		in.Urgency, in.Severity, in.Certainty = "Immediate", "Severe", "Observed"
	}
	minutes := DefaultMinutes
	c := s.Channels
	switch m.Channel {
	case channels.Eas:
		if c != nil && c.Eas != nil {
			in.EventCode = c.Eas.EventCode
			if c.Eas.DurationMinutes > 0 {
				minutes = c.Eas.DurationMinutes
			}
		}
	case channels.MobileBroadcast:
		in.Languages = []string{DefaultLanguage}
		if c != nil && c.MobileBroadcast != nil && c.MobileBroadcast.Language != "" {
			in.Languages[0] = c.MobileBroadcast.Language
		}
		if b := s.MobileBroadcast; b != nil {
			in.Languages = append(in.Languages, b.Languages...)
			if b.ExpiresInMinutes > 0 {
				minutes = b.ExpiresInMinutes
			}
		}
	}
	in.Sent = time.Now().Truncate(time.Second)
	in.Expires = in.Sent.Add(time.Duration(minutes) * time.Minute)
	return in
}

// AreasOf are the CAP areas of the alert's message on ch: one per area of
// settings.recipients.areas, named by its name ("Area <n>" when it has
// none), with a polygon per polygon of its geometry (the outer ring: CAP
// has no holes, so a hole's inside is part of the area) or its circle;
// for EAS one more with the block's SAME codes. An alert with neither is
// one area named after settings.location (else "Alert area") with the
// geocode tocsin-tenant=<tenant>, which the gateway targets by its own
// configuration. An area that fails the alert's checks is left out (they
// refuse it when the alert is made).
func AreasOf(tenant string, s *alert.Settings, ch channels.Channel) []AreaInput {
	var out []AreaInput
	for i, a := range s.Recipients.Areas {
		polys, err := alert.PolygonsOf(a)
		if err != nil {
			continue
		}
		area := AreaInput{Description: strings.TrimSpace(a.Name)}
		if area.Description == "" {
			area.Description = fmt.Sprintf("Area %d", i+1)
		}
		for _, p := range polys {
			ring := make([]Point, len(p.Outer))
			for j, pos := range p.Outer {
				ring[j] = Point{Lat: pos[1], Lng: pos[0]}
			}
			area.Polygons = append(area.Polygons, ring)
		}
		if polys == nil {
			area.Center, area.RadiusKm = &Point{Lat: a.Center.Lat, Lng: a.Center.Lng}, a.RadiusMeters/1000
		}
		out = append(out, area)
	}
	named := AreaInput{Description: "Alert area"}
	if l := s.Location; l != nil && l.Location != nil && l.Location.Name != "" {
		named.Description = l.Location.Name
	}
	if c := s.Channels; ch == channels.Eas && c != nil && c.Eas != nil && len(c.Eas.SameCodes) > 0 {
		named.SAME = c.Eas.SameCodes
		out = append(out, named)
	}
	if len(out) == 0 {
		named.Geocodes = []NamedValue{{ValueName: "tocsin-tenant", Value: tenant}}
		out = append(out, named)
	}
	return out
}
