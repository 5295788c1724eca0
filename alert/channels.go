package alert

import "github.com/tocsin/tocsin/channels"

// The versions of a stored file a channel uses (see FileKeys).
const (
	FileVoice    = "voice"
	FileEas      = "eas"
	FileDocument = "document"
)

// FileKeys returns the object key of the version use needs of the stored
// file name an alert's channel block names ("" when name is "").
type FileKeys func(use, name string) string

// Options sets the options of a message of a channel rendered by r
// (channels.Message.Options) from the alert's block of that channel. Each
// channel's package exports its own.
type Options func(r *Renderer, files FileKeys, m *channels.Message)

// StoredFile names the stored file an alert's channel block names and the
// version of it the channel uses (name "" when none).
type StoredFile func(c *Channels) (use, name string)

// Selection names the destinations of a PerDestination channel an alert's
// channel block asks for (ids or names); none means all of them.
type Selection func(c *Channels) []string

// Emergency reports whether the alert's priority is Emergency.
func (s *Settings) Emergency() bool {
	return s.Priority != nil && s.Priority.Priority == PriorityEmergency
}
