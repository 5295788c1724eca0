package fileservice

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Limits of file and folder names.
const (
	maxSegmentBytes = 255
	maxPathBytes    = 1024
)

// NormalName returns a file or folder path in Unicode normalization form C
// (NFC): "Ä" written as one character or as "A" and a combining diaeresis
// is the same name. Names are stored, checked and looked up in this form.
func NormalName(p string) string { return norm.NFC.String(p) }

// CheckPath validates a new file or folder path made of "/"-separated
// names: what CheckLookup asks, and no control or invisible character
// (invisible reports which) and no leading or trailing spaces in a name.
// It takes the path as NormalName gives it.
func CheckPath(p string) error {
	if err := CheckLookup(p); err != nil {
		return err
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.TrimSpace(seg) != seg {
			return fmt.Errorf("names must not start or end with spaces")
		}
		for _, r := range seg {
			if invisible(r) {
				return fmt.Errorf("must not contain control or invisible characters (%U)", r)
			}
		}
	}
	return nil
}

// CheckLookup validates a path that names a stored file: valid UTF-8
// without NUL, no leading or trailing "/", no empty, "." or ".." name, no
// backslash, and within the length limits. New names must also pass
// CheckPath; the looser check lets a file stored under a name that later
// rules refuse (an invisible character, a trailing space) still be read,
// described and deleted.
func CheckLookup(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("must not be empty")
	case !utf8.ValidString(p):
		return fmt.Errorf("must be valid UTF-8")
	case len(p) > maxPathBytes:
		return fmt.Errorf("must be at most %d bytes", maxPathBytes)
	case strings.ContainsRune(p, 0):
		return fmt.Errorf("must not contain NUL")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("must not start with /")
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("must not end with /")
	case strings.ContainsRune(p, '\\'):
		return fmt.Errorf("must not contain a backslash")
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("must not contain an empty name (//)")
		case seg == "." || seg == "..":
			return fmt.Errorf("must not contain . or .. as a name")
		case len(seg) > maxSegmentBytes:
			return fmt.Errorf("each name must be at most %d bytes", maxSegmentBytes)
		}
	}
	return nil
}

// invisible reports a character a name must not hold: a control character
// (Cc), a line or paragraph separator (Zl, Zp), and every character Unicode
// says is not shown (Default_Ignorable_Code_Point: the formatting
// characters Cf such as bidirectional controls and zero-width joiners, the
// variation selectors, and the Hangul fillers U+115F, U+1160, U+3164 and
// U+FFA0), and the blank braille pattern U+2800, which is drawn as nothing
// though no property says so. A replacement character stands for invalid
// UTF-8.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) ||
		r == '\u2800' || r == utf8.RuneError
}

// FullName joins a folder and a file name.
func FullName(folder, name string) string {
	if folder == "" {
		return name
	}
	return folder + "/" + name
}

// SplitName returns the folder and the name of a full name.
func SplitName(full string) (folder, name string) {
	dir, base := path.Split(full)
	return strings.TrimSuffix(dir, "/"), base
}
