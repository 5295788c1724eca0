package alertmsg

import (
	"strings"
	"unicode/utf8"
)

// CutWords is t, its outer white space trimmed, cut to at most limit
// characters: at the last space when one lies in the last third of what
// fits, so that a word is not split, else at limit.
func CutWords(t string, limit int) string {
	t = strings.TrimSpace(t)
	runes := []rune(t)
	if len(runes) <= limit {
		return t
	}
	c := string(runes[:limit])
	if i := strings.LastIndexByte(c, ' '); runes[limit] != ' ' && i >= 0 && utf8.RuneCountInString(c[:i]) > limit*2/3 {
		c = c[:i]
	}
	return strings.TrimSpace(c)
}
