package etn

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/internal/names"
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

// Areas are the places an ETN alert calls inside: the places of its
// recipients' areas (alert.AreasOf), polygons without their holes, as
// the alert's contacts are selected inside them. An alert whose areas are
// not valid has none (its recipients do not resolve either).
func Areas(s *alert.Settings) []alert.Place {
	areas, err := alert.AreasOf(s.Recipients.Areas)
	if err != nil {
		return nil
	}
	return areas.Places()
}

// Targets are what an alert with areas calls: the places of its areas and
// the address-point lists whose numbers inside them are called with the
// contacts'. No places means the alert has no areas and calls its
// recipients.
func Targets(s *alert.Settings) (areas []alert.Place, lists []string) {
	if c := s.Channels; c != nil && c.Etn != nil {
		for _, l := range c.Etn.AddressPointLists {
			lists = append(lists, names.Normal(l)) // as stored; an alert accepted before may give another form
		}
	}
	return Areas(s), lists
}
