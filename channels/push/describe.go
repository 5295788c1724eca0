package push

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the push channel: a notification per device token
// of the recipient's push app.
var Descriptor = channels.Descriptor{Channel: channels.Push, App: AppPush}

// MyAlertsDescriptor describes the My Alerts app channel, addressed like push.
var MyAlertsDescriptor = channels.Descriptor{Channel: channels.MyAlertsApp, App: AppMyAlerts}

// ToneSounds are the sound files of the loud tones priority.loudTone.sound
// names; Siren, the default, is the app's loud_tone.caf.
var ToneSounds = map[string]string{"Siren": "loud_tone.caf", "Alarm": "alarm.caf", "Chime": "chime.caf"}

// FromAlert marks emergency alerts' notifications Emergency, with the loud
// tone when the channel block or the alert's priority asks for it: the
// sound and duration priority.loudTone gives. The block's title and body
// are rendered by alert.Renderer.Message.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	s := r.Settings
	if !s.Emergency() {
		return
	}
	block := s.Channels.Push
	if m.Channel == channels.MyAlertsApp {
		block = s.Channels.MyAlertsApp
	}
	lt := s.Priority.LoudTone
	o := Options{Emergency: true, LoudTone: lt != nil && lt.Enabled || block != nil && block.LoudTone}
	if o.LoudTone && lt != nil {
		o.Sound, o.ToneSeconds = ToneSounds[lt.Sound], lt.DurationSeconds
	}
	m.Options = o
}
