package email

import "github.com/tocsin/tocsin/channels"

// Descriptor describes the email channel: a message per recipient, to the
// address the recipient row holds, throttled by the worker's delivery rate.
var Descriptor = channels.Descriptor{Channel: channels.Email, WorkerRate: true}
