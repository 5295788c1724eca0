package alertmsg

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The GSM 03.38 basic character set and its extension table (each extension
// character takes two septets).
const (
	gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExt   = "^{}\\[~]|€\f"
)

var gsmBasicSet, gsmExtSet = runeSet(gsmBasic), runeSet(gsmExt)

func runeSet(s string) map[rune]bool {
	m := map[rune]bool{}
	for _, r := range s {
		m[r] = true
	}
	return m
}

// SMS encodings.
const (
	GSM7 = "GSM-7"
	UCS2 = "UCS-2"
)

// SMSInfo returns the encoding a text needs, its length in that encoding's
// units (septets for GSM-7, UTF-16 code units for UCS-2) and the number of
// segments it takes: 160 septets or 70 units in one segment, 153 or 67 per
// segment when concatenated.
func SMSInfo(text string) (encoding string, units, segments int) {
	encoding = GSM7
	for _, r := range text {
		if unitsOf(r, GSM7) == 0 {
			encoding = UCS2
			break
		}
	}
	for _, r := range text {
		units += unitsOf(r, encoding)
	}
	single, multi := segmentSizes(encoding)
	return encoding, units, segmentsFor(units, single, multi)
}

// segmentSizes are the units of encoding enc one segment holds: alone, and
// as part of a concatenated message.
func segmentSizes(enc string) (single, multi int) {
	if enc == UCS2 {
		return 70, 67
	}
	return 160, 153
}

func segmentsFor(n, single, multi int) int {
	if n == 0 {
		return 1
	}
	if n <= single {
		return 1
	}
	return (n + multi - 1) / multi
}

// Unknown replaces, in ToGSM7, a character that GSM-7 lacks and that has no
// base letter in GSM-7.
const Unknown = "?"

// ToGSM7 returns s with every character that GSM-7 lacks replaced: by its
// base letter when it decomposes to one that GSM-7 has (NFD, combining
// marks dropped: "ë" → "e", "Ŝ" → "S"), else by Unknown, once per
// character (an emoji, a UTF-16 surrogate pair, is one). A letter written
// with separate combining marks counts as the one character they make.
func ToGSM7(s string) string {
	if enc, _, _ := SMSInfo(s); enc == GSM7 {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFC.String(s) {
		if unitsOf(r, GSM7) == 0 {
			r = baseLetter(r)
		}
		if r == 0 {
			b.WriteString(Unknown)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// baseLetter is the GSM-7 character r is, once decomposed and stripped of
// combining marks, or 0 when it is not one.
func baseLetter(r rune) rune {
	var base []rune
	for _, d := range norm.NFD.String(string(r)) {
		if !unicode.Is(unicode.Mn, d) {
			base = append(base, d)
		}
	}
	if len(base) != 1 || unitsOf(base[0], GSM7) == 0 {
		return 0
	}
	return base[0]
}

// Ellipsis ends a text message's body that FitSMS shortened; it is GSM-7,
// so it never makes a text need UCS-2.
const Ellipsis = "..."

// FitSMS returns body followed by tail, shortened when it takes more than
// maxSegments segments (SMSInfo) to fit them: tail stays whole and body is
// cut after a whole character (never inside a UTF-16 surrogate pair or a
// two-septet GSM-7 character) to the longest start that fits, its trailing
// spaces dropped and Ellipsis added. When body shows keep (a response link)
// and the cut would lose it, keep follows the Ellipsis, after a space, and
// the body is cut before it. When not even Ellipsis and tail fit, tail is
// sent alone. The text takes GSM-7 whenever body and tail do. maxSegments
// below 1 leaves every text whole.
func FitSMS(body, tail string, maxSegments int, keep string) (text string, shortened bool) {
	text = body + tail
	if _, _, n := SMSInfo(text); maxSegments < 1 || n <= maxSegments {
		return text, false
	}
	text = shorten(body, tail, maxSegments)
	if at := strings.Index(body, keep); keep != "" && at >= 0 && !strings.Contains(strings.TrimSuffix(text, tail), keep) {
		text = shorten(body[:at], " "+keep+tail, maxSegments)
	}
	return text, true
}

// shorten cuts body so that it, Ellipsis and tail take at most maxSegments
// segments, in whichever encoding keeps more of body.
func shorten(body, tail string, maxSegments int) string {
	cut := max(fitting(body, tail, GSM7, maxSegments), fitting(body, tail, UCS2, maxSegments))
	if cut < 0 {
		return strings.TrimLeftFunc(tail, unicode.IsSpace)
	}
	return strings.TrimRightFunc(body[:cut], unicode.IsSpace) + Ellipsis + tail
}

// fitting is the length in bytes of the longest start of body that, with
// Ellipsis and tail after it, takes at most maxSegments segments in
// encoding enc, or -1 when none does. In GSM-7 the start ends before the
// first character that GSM-7 lacks.
func fitting(body, tail, enc string, maxSegments int) int {
	single, multi := segmentSizes(enc)
	room := multi * maxSegments
	if maxSegments == 1 {
		room = single
	}
	for _, r := range Ellipsis + tail {
		u := unitsOf(r, enc)
		if u == 0 {
			return -1
		}
		room -= u
	}
	if room < 0 {
		return -1
	}
	for i, r := range body {
		u := unitsOf(r, enc)
		if u == 0 || u > room {
			return i
		}
		room -= u
	}
	return len(body)
}

// unitsOf is the number of units r takes in encoding enc: septets in
// GSM-7 (0 when GSM-7 lacks r), UTF-16 code units in UCS-2.
func unitsOf(r rune, enc string) int {
	switch {
	case enc == UCS2 && r > 0xFFFF:
		return 2
	case enc == UCS2 || gsmBasicSet[r]:
		return 1
	case gsmExtSet[r]:
		return 2
	}
	return 0
}
