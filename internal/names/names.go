// Package names holds the one rule for names: those that identify
// something of a tenant and must be unique (group, distribution list,
// address-point list and file names, directory ids, external ids, roles)
// and the names of people and places, which operators tell apart on
// screen. A name is kept in Unicode normalization form C (NFC), so that
// two spellings of one text (é as one character, or e and a combining
// accent) are one name, and must not hold a character that can hide
// what it says: a control character, a bidirectional control (which can
// make a name display as another), a line or paragraph separator, or an
// invisible character. Joiners and selectors that scripts and emoji
// need are taken where they change how a name is drawn (see Check).
package names

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normal returns s in NFC: the form names are stored, compared and looked
// up in. A lookup of a stored name goes through Normal only, so that a
// name stored before Check's rule still answers.
func Normal(s string) string { return norm.NFC.String(s) }

// Check returns the name s in NFC, or an error that says which character
// of it the rule refuses, and why. Refused anywhere: control characters
// (C0, DEL and C1), bidirectional controls (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069), line and paragraph separators, and the
// characters Unicode says are not shown (Default_Ignorable_Code_Point:
// format characters such as zero-width spaces and soft hyphens, the
// Hangul fillers), with the blank braille pattern U+2800, which is drawn
// as nothing though no property says so, and the replacement character
// U+FFFD, which stands for text that was not valid UTF-8. Taken only in
// context:
//
//   - a zero-width joiner (U+200D) or non-joiner (U+200C) after a virama,
//     between two letters of a script written with joined or conjoined
//     letters (Arabic, Syriac, N'Ko, Mongolian and the other cursive
//     scripts; Devanagari, Bengali and the other scripts of South and
//     Southeast Asia), or, a joiner, between two symbols (the emoji
//     sequences 👩‍💻, 🏳️‍🌈);
//   - a variation selector after a character it selects a glyph of: VS15
//     and VS16 after a symbol (❤️) or a keycap's digit, # or * (1️⃣), the
//     others after a Han ideograph (the ideographic variants of Japanese
//     names) and the Mongolian ones, and the Mongolian vowel separator,
//     after a Mongolian letter;
//   - tag characters in an emoji flag of a region (🏴 and a tag run that
//     ends in U+E007F, as in the flag of Scotland).
//
// Anywhere else — at the start or end of a name, between Latin letters,
// after a space — such a character changes nothing that is drawn, so it
// would only make two names that look alike differ.
func Check(s string) (string, error) {
	if !utf8.ValidString(s) {
		return s, errors.New("must be valid UTF-8")
	}
	s = Normal(s)
	if r, why := refused(s); why != "" {
		return s, fmt.Errorf("must not contain %U, %s", r, why)
	}
	return s, nil
}

// Why a character is refused.
const (
	whyReplaced  = "the replacement character, which stands for text that was not valid UTF-8"
	whyControl   = "a control character"
	whyBidi      = "a bidirectional control, which can make a name display as another"
	whySeparator = "a line or paragraph separator"
	whyInvisible = "an invisible character"
	whyJoiner    = "a zero-width joiner or non-joiner that joins nothing here: it is taken after a virama, between letters of a script that joins them, and between emoji"
	whySelector  = "a variation selector that selects nothing here: it is taken after an emoji, a Han ideograph or a Mongolian letter"
	whyTag       = "a tag character outside an emoji flag"
)

// refused returns the first character of s (in NFC) that the rule
// refuses, and why; why is "" when there is none.
func refused(s string) (rune, string) {
	runes := []rune(s)
	for i, r := range runes {
		if why := refusedAt(runes, i); why != "" {
			return r, why
		}
	}
	return 0, ""
}

// refusedAt says why runes[i] is refused in its place, or "".
func refusedAt(runes []rune, i int) string {
	r := runes[i]
	switch {
	case unicode.Is(unicode.Cc, r):
		return whyControl
	case unicode.Is(bidiControls, r):
		return whyBidi
	case unicode.In(r, unicode.Zl, unicode.Zp):
		return whySeparator
	case r == zwj || r == zwnj:
		if joins(runes, i) {
			return ""
		}
		return whyJoiner
	case unicode.Is(unicode.Variation_Selector, r) || r == mongolianVowelSeparator:
		if selects(runes, i) {
			return ""
		}
		return whySelector
	case r >= tagFirst && r <= tagCancel:
		if inFlag(runes, i) {
			return ""
		}
		return whyTag
	case unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point) || r == '\u2800':
		return whyInvisible
	case r == utf8.RuneError:
		return whyReplaced
	}
	return ""
}

// The characters the rule takes in context.
const (
	zwnj                    = '\u200C'
	zwj                     = '\u200D'
	mongolianVowelSeparator = '\u180E'
	vs15                    = '\uFE0E'
	vs16                    = '\uFE0F'
	keycap                  = '\u20E3'
	blackFlag               = '\U0001F3F4'
	tagFirst                = '\U000E0020'
	tagCancel               = '\U000E007F'
	viramaClass             = 9 // the canonical combining class of viramas
)

// bidiControls are the characters that change the direction text is shown in.
var bidiControls = &unicode.RangeTable{R16: []unicode.Range16{
	{Lo: 0x061C, Hi: 0x061C, Stride: 1},
	{Lo: 0x200E, Hi: 0x200F, Stride: 1},
	{Lo: 0x202A, Hi: 0x202E, Stride: 1},
	{Lo: 0x2066, Hi: 0x2069, Stride: 1},
}}

// joiningScripts are the scripts in which a zero-width joiner or
// non-joiner between two letters changes how they are drawn: the cursive
// scripts, whose letters join, and the Brahmic scripts of South and
// Southeast Asia, whose consonants form conjuncts.
var joiningScripts = func() []*unicode.RangeTable {
	var out []*unicode.RangeTable
	for _, name := range []string{
		"Arabic", "Syriac", "Nko", "Mongolian", "Phags_Pa", "Manichaean", "Psalter_Pahlavi", "Adlam",
		"Hanifi_Rohingya", "Sogdian", "Old_Uyghur", "Mandaic", "Chorasmian",
		"Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam",
		"Sinhala", "Tibetan", "Myanmar", "Khmer", "Balinese", "Javanese", "Sundanese", "Tai_Tham",
	} {
		if t, ok := unicode.Scripts[name]; ok {
			out = append(out, t)
		}
	}
	return out
}()

// joins reports whether the joiner or non-joiner runes[i] stands where it
// can change how its neighbours are drawn.
func joins(runes []rune, i int) bool {
	if i == 0 || i+1 >= len(runes) {
		return false
	}
	next := runes[i+1]
	if !unicode.In(next, unicode.L, unicode.M, unicode.S) {
		return false
	}
	if norm.NFC.PropertiesString(string(runes[i-1])).CCC() == viramaClass {
		return true
	}
	prev := base(runes, i)
	switch {
	case unicode.IsLetter(prev) && unicode.In(next, unicode.L, unicode.M):
		for _, sc := range joiningScripts {
			if unicode.Is(sc, prev) && unicode.Is(sc, next) {
				return true
			}
		}
	case runes[i] == zwj && unicode.In(prev, unicode.So, unicode.Sk) && unicode.Is(unicode.So, next):
		return true
	}
	return false
}

// base is the character that runes[i] follows, leaving out the marks and
// variation selectors between them; -1 when there is none.
func base(runes []rune, i int) rune {
	for j := i - 1; j >= 0; j-- {
		if r := runes[j]; !unicode.In(r, unicode.M, unicode.Variation_Selector) {
			return r
		}
	}
	return -1
}

// selects reports whether the variation selector (or Mongolian vowel
// separator) runes[i] follows a character it selects a glyph of.
func selects(runes []rune, i int) bool {
	if i == 0 {
		return false
	}
	prev, r := runes[i-1], runes[i]
	switch {
	case unicode.Is(unicode.Mongolian, r): // the free variation selectors and the vowel separator
		return unicode.Is(unicode.Mongolian, prev) && unicode.IsLetter(prev)
	case r == vs15 || r == vs16:
		if unicode.Is(unicode.S, prev) || prev == '\u203C' || prev == '\u2049' || prev == '\u2139' || prev == '\u3030' || prev == '\u303D' {
			return true // emoji whose character is a symbol, and the few that are not (‼ ⁉ ℹ 〰 〽)
		}
		if (prev >= '0' && prev <= '9' || prev == '#' || prev == '*') && i+1 < len(runes) && runes[i+1] == keycap {
			return true
		}
	}
	return unicode.Is(unicode.Han, prev)
}

// inFlag reports whether the tag character runes[i] belongs to an emoji
// tag sequence: U+1F3F4, tags, and the cancel tag U+E007F that ends it.
func inFlag(runes []rune, i int) bool {
	start := i
	for start > 0 && runes[start-1] >= tagFirst && runes[start-1] <= tagCancel {
		start--
	}
	if start == 0 || runes[start-1] != blackFlag {
		return false
	}
	for j := start; j < len(runes) && runes[j] >= tagFirst && runes[j] <= tagCancel; j++ {
		if runes[j] == tagCancel {
			return j > start && j >= i
		}
	}
	return false
}
