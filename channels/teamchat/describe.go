package teamchat

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the team-chat channel: one post per configured
// target.
var Descriptor = channels.Descriptor{Channel: channels.TeamChat}

// FromAlert sets m's Options: emergency alerts' posts are urgent.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	m.Options = Options{Urgent: r.Settings.Emergency()}
}

// Select names the targets the alert's block asks for.
func Select(c *alert.Channels) []string {
	if c.TeamChat == nil {
		return nil
	}
	return c.TeamChat.Targets
}
