package alerting

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/internal/emailaddr"
	"github.com/tocsin/tocsin/internal/names"
)

// checkSenderName returns the sender name in NFC, or why it cannot be a
// display name, by the one rule for names (names.Check): no control
// characters (a line break, a tab), and none that can make it display as
// another name (a bidirectional control reversing it, an invisible
// character). Every other character is taken; the email's From carries it
// quoted or encoded.
func checkSenderName(name string) (string, error) {
	n, err := names.Check(name)
	if err != nil {
		return name, fmt.Errorf("a display name %w", err)
	}
	return n, nil
}

// checkSender checks what the alert says about its sender and its emails'
// Reply-To (its own or the defaults'), keeping each Reply-To in its one
// spelling: an address alone, as recipients' are (emailaddr.Normalize).
func checkSender(s *alert.Settings, f *failures) {
	if snd := s.Sender; snd != nil {
		name, err := checkSenderName(snd.Name)
		if err != nil {
			f.add("sender.name", err.Error(), snd.Name)
		}
		snd.Name = name
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

// checkSocialMedia checks the hashtags (each one tag, none twice) and that
// network A's posts keep room for their text: the link and hashtags that
// end them take at most social.MaxTailA characters.
func checkSocialMedia(s *alert.Settings, f *failures) {
	sm := s.SocialMedia
	if sm != nil {
		seen := map[string]int{}
		for i, h := range sm.Hashtags {
			field := fmt.Sprintf("socialMedia.hashtags[%d]", i)
			if err := social.CheckHashtag(h); err != nil {
				f.add(field, err.Error(), h)
				continue
			}
			key := strings.ToLower(strings.TrimPrefix(h, "#"))
			if j, ok := seen[key]; ok {
				f.add(field, fmt.Sprintf("the same hashtag as socialMedia.hashtags[%d]", j), h)
				continue
			}
			seen[key] = i
		}
	}
	c := s.Channels
	if c == nil || c.SocialPostA == nil || !c.SocialPostA.Enabled {
		return
	}
	o := social.OptionsFor(s, channels.SocialPostA)
	if n := utf8.RuneCountInString(o.Tail(social.NetworkA)); n > social.MaxTailA {
		field := "content.link"
		if len(o.Hashtags) > 0 {
			field = "socialMedia.hashtags"
		}
		f.add(field, fmt.Sprintf("the link and hashtags that end network A's posts take %d characters, more than %d (half of its %d): leave room for the text",
			n, social.MaxTailA, social.LimitA), nil)
	}
}
