package neighborhood

import (
	"strings"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the neighborhood channel: one post per configured
// agency account.
var Descriptor = channels.Descriptor{Channel: channels.Neighborhood, Addressing: channels.PerDestination}

// Options adds the groups the alert's block names and marks emergency
// alerts' posts urgent.
func Options(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	if n := r.Settings.Channels.Neighborhood; n != nil && len(n.Groups) > 0 {
		m.Metadata[MetaGroups] = strings.Join(n.Groups, ",")
	}
	if r.Settings.Emergency() {
		m.Metadata[MetaUrgent] = "true"
	}
}

// Select names the accounts the alert's block asks for.
func Select(c *alert.Channels) []string {
	if c.Neighborhood == nil {
		return nil
	}
	return c.Neighborhood.Accounts
}
