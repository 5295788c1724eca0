package teamchat

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the team-chat channel: one post per configured
// target.
var Descriptor = channels.Descriptor{Channel: channels.TeamChat, Addressing: channels.PerDestination}

// Options marks emergency alerts' posts urgent.
func Options(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	if r.Settings.Emergency() {
		m.Metadata[MetaPriority] = "Emergency"
	}
}

// Select names the targets the alert's block asks for.
func Select(c *alert.Channels) []string {
	if c.TeamChat == nil {
		return nil
	}
	return c.TeamChat.Targets
}
