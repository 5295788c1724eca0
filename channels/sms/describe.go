package sms

import (
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// Descriptor describes the text channel: a message per recipient, to the
// number the recipient row holds, throttled by the worker's delivery rate.
var Descriptor = channels.Descriptor{Channel: channels.Text, WorkerRate: true}

// Options are the settings of a text message (its channels.Message.Options).
type Options struct {
	// From is the number the text asks to be sent from (the request's
	// from); none when empty, and the provider sends from its own.
	From string
}

// FromAlert sets m's Options from the alert: the sender's caller id as the
// number to send from.
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	m.Options = Options{From: r.Settings.CallerID("")}
}
