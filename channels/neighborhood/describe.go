package neighborhood

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the neighborhood channel: one post per configured
// agency account.
var Descriptor = channels.Descriptor{Channel: channels.Neighborhood}

// FromAlert sets m's Options: the groups the alert's block names, and
// emergency alerts' posts are urgent.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	o := Options{Urgent: r.Settings.Emergency()}
	if n := r.Settings.Channels.Neighborhood; n != nil {
		o.Groups = n.Groups
	}
	m.Options = o
}

// Select names the accounts the alert's block asks for.
func Select(c *alert.Channels) []string {
	if c.Neighborhood == nil {
		return nil
	}
	return c.Neighborhood.Accounts
}
