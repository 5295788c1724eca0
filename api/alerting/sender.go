package alerting

import (
	"errors"
	"strings"
	"unicode"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/emailaddr"
)

// checkSenderName refuses a sender name that cannot be a display name:
// one with control characters (a line break, a tab). Every other
// character is taken; the email's From carries it quoted or encoded.
func checkSenderName(name string) error {
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return errors.New("a display name holds no control characters (line breaks, tabs)")
	}
	return nil
}

// checkSender checks what the alert says about its sender and its emails'
// Reply-To (its own or the defaults'), keeping each Reply-To in its one
// spelling: an address alone, as recipients' are (emailaddr.Normalize).
func checkSender(s *alert.Settings, f *failures) {
	if snd := s.Sender; snd != nil {
		if err := checkSenderName(snd.Name); err != nil {
			f.add("sender.name", err.Error(), snd.Name)
		}
		if snd.ReplyTo != "" {
			addr, err := emailaddr.Normalize(snd.ReplyTo)
			if err != nil {
				f.add("sender.replyTo", err.Error(), snd.ReplyTo)
			}
			snd.ReplyTo = addr
		}
	}
	if c := s.Channels; c != nil && c.Email != nil && c.Email.ReplyTo != "" {
		addr, err := emailaddr.Normalize(c.Email.ReplyTo)
		if err != nil {
			f.add("channels.email.replyTo", err.Error(), c.Email.ReplyTo)
		}
		c.Email.ReplyTo = addr
	}
}
