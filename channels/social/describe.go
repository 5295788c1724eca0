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

// includeLink reports whether the alert's block of network ch asks for
// the link.
func includeLink(c *alert.Channels, ch channels.Channel) bool {
	if ch == channels.SocialPostA && c.SocialPostA != nil {
		return c.SocialPostA.IncludeLink
	}
	if ch == channels.SocialPostB && c.SocialPostB != nil {
		return c.SocialPostB.IncludeLink
	}
	return false
}

// FromAlert adds the alert's link when the block asks for it: network B
// shows it with the post (Options), network A's text ends with it.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	s := r.Settings
	if !includeLink(s.Channels, m.Channel) || s.Content == nil || s.Content.Link == "" {
		return
	}
	m.Options = Options{Link: s.Content.Link}
	if m.Channel == channels.SocialPostA {
		m.Text += " " + s.Content.Link
	}
}

// SelectA names the network A accounts the alert's block asks for.
func SelectA(c *alert.Channels) []string {
	if c.SocialPostA == nil {
		return nil
	}
	return c.SocialPostA.Accounts
}

// SelectB names the network B accounts the alert's block asks for.
func SelectB(c *alert.Channels) []string {
	if c.SocialPostB == nil {
		return nil
	}
	return c.SocialPostB.Accounts
}
