package fileservice

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of file and folder names.
const (
	maxSegmentBytes = 255
	maxPathBytes    = 1024
)

// CheckPath validates a file or folder path made of "/"-separated names:
// no leading or trailing "/", no empty, "." or ".." segment, no backslash,
// no control or invisible formatting characters, valid UTF-8, no leading or
// trailing spaces in a segment, and within the length limits.
func CheckPath(p string) error {
	if p == "" {
		return fmt.Errorf("must not be empty")
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("must be valid UTF-8")
	}
	if len(p) > maxPathBytes {
		return fmt.Errorf("must be at most %d bytes", maxPathBytes)
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("must not start with /")
	}
	if strings.HasSuffix(p, "/") {
		return fmt.Errorf("must not end with /")
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("must not contain an empty name (//)")
		case seg == "." || seg == "..":
			return fmt.Errorf("must not contain . or .. as a name")
		case len(seg) > maxSegmentBytes:
			return fmt.Errorf("each name must be at most %d bytes", maxSegmentBytes)
		case strings.TrimSpace(seg) != seg:
			return fmt.Errorf("names must not start or end with spaces")
		}
		for _, r := range seg {
			if r == '\\' {
				return fmt.Errorf("must not contain a backslash")
			}
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
				return fmt.Errorf("must not contain control or invisible formatting characters")
			}
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
