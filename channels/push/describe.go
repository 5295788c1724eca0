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

// FromAlert marks emergency alerts' notifications Emergency, with the loud
// tone when the channel block or the alert's priority asks for it. The
// block's title and body are rendered by alert.Renderer.Message.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	s := r.Settings
	if !s.Emergency() {
		return
	}
	block := s.Channels.Push
	if m.Channel == channels.MyAlertsApp {
		block = s.Channels.MyAlertsApp
	}
	tone := s.Priority.LoudTone != nil && s.Priority.LoudTone.Enabled
	m.Options = Options{Emergency: true, LoudTone: tone || block != nil && block.LoudTone}
}
