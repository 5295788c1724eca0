package sms

import "github.com/tocsin/tocsin/channels"

// Descriptor describes the text channel: a message per recipient, to the
// number the recipient row holds, throttled by the worker's delivery rate.
var Descriptor = channels.Descriptor{Channel: channels.Text, WorkerRate: true}
