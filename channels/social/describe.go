package social

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// DescriptorA and DescriptorB describe the two networks' channels: one
// post per configured account.
var (
	DescriptorA = channels.Descriptor{Channel: channels.SocialPostA}
	DescriptorB = channels.Descriptor{Channel: channels.SocialPostB}
)

// block is the alert's block of network ch (nil when it has none).
func block(c *alert.Channels, ch channels.Channel) *alert.SocialPostChannel {
	if c == nil {
		return nil
	}
	if ch == channels.SocialPostA {
		return c.SocialPostA
	}
	return c.SocialPostB
}

// FromAlert sets m's Options (OptionsFor).
func FromAlert(r *alert.Renderer, _ alert.FileKeys, m *channels.Message) {
	m.Options = OptionsFor(r.Settings, m.Channel)
}

// OptionsFor are the options of the alert's posts on network ch: its
// content.link when the network's block or socialMedia asks for it
// (includeLink), and socialMedia's hashtags, each with its "#".
func OptionsFor(s *alert.Settings, ch channels.Channel) Options {
	var o Options
	b := block(s.Channels, ch)
	sm := s.SocialMedia
	if (b != nil && b.IncludeLink || sm != nil && sm.IncludeLink) && s.Content != nil {
		o.Link = s.Content.Link
	}
	if sm != nil {
		for _, h := range sm.Hashtags {
			o.Hashtags = append(o.Hashtags, "#"+strings.TrimPrefix(h, "#"))
		}
	}
	return o
}

// MaxHashtag is the most characters of a hashtag, its "#" aside.
const MaxHashtag = 50

// CheckHashtag says why tag, given with or without its "#", is not one
// hashtag on the networks: a tag ends at the first character that is not
// a letter, digit, mark or underscore, and one of digits alone tags
// nothing.
func CheckHashtag(tag string) error {
	t := strings.TrimPrefix(tag, "#")
	n := utf8.RuneCountInString(t)
	if n == 0 || n > MaxHashtag {
		return fmt.Errorf("a hashtag takes 1 to %d characters besides its #", MaxHashtag)
	}
	letter := false
	for _, r := range t {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r) || unicode.IsMark(r) || r == '_':
		default:
			return fmt.Errorf("%q cannot be in a hashtag: use letters, digits and underscores only (a space or punctuation would end the tag)", r)
		}
	}
	if !letter {
		return errors.New("a hashtag of digits alone tags nothing: add a letter")
	}
	return nil
}

// SelectA names the network A accounts the alert's block asks for.
func SelectA(c *alert.Channels) []string { return accounts(block(c, channels.SocialPostA)) }

// SelectB names the network B accounts the alert's block asks for.
func SelectB(c *alert.Channels) []string { return accounts(block(c, channels.SocialPostB)) }

func accounts(b *alert.SocialPostChannel) []string {
	if b == nil {
		return nil
	}
	return b.Accounts
}
