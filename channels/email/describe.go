package email

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the email channel: a message per recipient, to the
// address the recipient row holds, throttled by the worker's delivery rate.
var Descriptor = channels.Descriptor{Channel: channels.Email, WorkerRate: true}

// Options are the settings of an email (its channels.Message.Options); the
// zero value sends from the configured sender without a Reply-To.
type Options struct {
	// FromName is the display name of From; its address stays the
	// configured sender's (Config.From), so the platform's SPF and DMARC
	// hold. Empty keeps the configured sender's name.
	FromName string
	// ReplyTo is the address (alone) of the Reply-To header; none when
	// empty.
	ReplyTo string
}

// FromAlert sets m's Options from the alert: the sender's name as From's
// display name and the Reply-To of the email block or the sender
// (alert.Settings.ReplyTo).
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	s := r.Settings
	m.Options = Options{FromName: s.SenderName(), ReplyTo: s.ReplyTo()}
}
