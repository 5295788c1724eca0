package fileservice

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/names"
)

// Limits of file and folder names.
const (
	maxSegmentBytes = 255
	maxPathBytes    = 1024
)

// CheckPath validates a new file or folder path made of "/"-separated
// names: what CheckLookup asks, each name held to the rule of names
// (internal/names: no control, bidirectional or invisible character
// outside the joiners and selectors scripts and emoji need), and no
// leading or trailing spaces in a name. It takes the path in NFC, as
// names.Normal gives it: files are stored, checked and looked up in that
// form, so "Ä" written as one character or as "A" and a combining
// diaeresis is the same name.
func CheckPath(p string) error {
	if err := CheckLookup(p); err != nil {
		return err
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.TrimSpace(seg) != seg {
			return fmt.Errorf("names must not start or end with spaces")
		}
		if _, err := names.Check(seg); err != nil {
			return err
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
