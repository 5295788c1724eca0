package etn

import (
	"encoding/json"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Descriptor describes the ETN channel: a call per number inside the
// alert's areas (see Areas), or per recipient when it has none.
var Descriptor = channels.Descriptor{Channel: channels.Etn, Calls: true}

// FromAlert sets m's Options (voice.Options) from the alert's ETN block:
// repeat, the stored audio file and the caller id (the block's, else the
// sender's), and the message's language.
func FromAlert(r *alert.Renderer, files alert.FileKeys, m *channels.Message) {
	v := r.Settings.Channels.Etn
	if v == nil {
		v = &alert.EtnChannel{}
	}
	m.Options = voice.Played(r.Settings, v.Repeat, v.AudioFileName, v.CallerID, files)
}

// File is the stored audio file the alert's ETN block plays.
func File(c *alert.Channels) (use, name string) {
	if c.Etn == nil {
		return "", ""
	}
	return alert.FileVoice, c.Etn.AudioFileName
}

// Areas are the ETN areas of an alert: its recipients' areas (circles and
// the outer rings of polygons).
func Areas(s *alert.Settings) []Area {
	var out []Area
	for _, a := range s.Recipients.Areas {
		if a.Center != nil && a.RadiusMeters > 0 {
			out = append(out, Area{Center: &LatLng{Lat: a.Center.Lat, Lng: a.Center.Lng}, RadiusMeters: a.RadiusMeters})
		}
		if a.Geometry == nil {
			continue
		}
		for _, f := range a.Geometry.Features {
			var polys [][][][2]float64
			switch f.Geometry.Type {
			case "Polygon":
				var p [][][2]float64
				if json.Unmarshal(f.Geometry.Coordinates, &p) == nil {
					polys = append(polys, p)
				}
			case "MultiPolygon":
				_ = json.Unmarshal(f.Geometry.Coordinates, &polys)
			}
			for _, p := range polys {
				if len(p) == 0 {
					continue
				}
				var ring []LatLng
				for _, pos := range p[0] {
					ring = append(ring, LatLng{Lat: pos[1], Lng: pos[0]})
				}
				out = append(out, Area{Polygon: ring})
			}
		}
	}
	return out
}

// Targets are what an alert with areas calls: the valid areas of s as
// stored rows and the address-point lists whose numbers inside them are
// called with the contacts'. No rows means the alert has no areas and calls
// its recipients.
func Targets(s *alert.Settings) (areas []channelstate.Area, lists []string) {
	for _, ar := range Areas(s) {
		if ar.Validate() == nil {
			areas = append(areas, ar.Row())
		}
	}
	if c := s.Channels; c != nil && c.Etn != nil {
		for _, l := range c.Etn.AddressPointLists {
			lists = append(lists, names.Normal(l)) // as stored; an alert accepted before may give another form
		}
	}
	return areas, lists
}
