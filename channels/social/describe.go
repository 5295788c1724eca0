package social

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// DescriptorA and DescriptorB describe the two networks' channels: one
// post per configured account.
var (
	DescriptorA = channels.Descriptor{Channel: channels.SocialPostA}
	DescriptorB = channels.Descriptor{Channel: channels.SocialPostB}
)

// block is the alert's block of network ch (nil when it has none).
func block(c *alert.Channels, ch channels.Channel) *alert.SocialPostChannel {
	if ch == channels.SocialPostA {
		return c.SocialPostA
	}
	return c.SocialPostB
}

// FromAlert adds the alert's link when the block asks for it: network B
// shows it with the post (Options), network A's text ends with it.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	s := r.Settings
	if b := block(s.Channels, m.Channel); b == nil || !b.IncludeLink || s.Content == nil || s.Content.Link == "" {
		return
	}
	m.Options = Options{Link: s.Content.Link}
	if m.Channel == channels.SocialPostA {
		m.Text += " " + s.Content.Link
	}
}

// SelectA names the network A accounts the alert's block asks for.
func SelectA(c *alert.Channels) []string { return accounts(block(c, channels.SocialPostA)) }

// SelectB names the network B accounts the alert's block asks for.
func SelectB(c *alert.Channels) []string { return accounts(block(c, channels.SocialPostB)) }

func accounts(b *alert.SocialPostChannel) []string {
	if b == nil {
		return nil
	}
	return b.Accounts
}
