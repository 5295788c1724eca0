// Package csvheader reads imported CSV files with the rules every import of
// tocsin follows. The header row: each cell names a known column, no column
// is named twice and every required column is there. A typo or a repeated
// column would otherwise lose data or put it in the wrong place without a
// word, so the file is refused instead. The rows: Reader holds no record
// longer than MaxRecordBytes, so a file without line breaks, or with a
// quoted field that never closes, cannot make the server hold it whole.
// The problems: they quote a Preview of a cell, never the cell.
package csvheader

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Columns checks the cells of a header row and returns the column each one
// names, in order. column maps a cell, trimmed of spaces (and of a byte
// order mark before the first), to its column's canonical name, or returns
// an error saying why the cell names no column (see Unknown). Two cells
// naming the same column, or a required column that no cell names, are
// errors too, as is a cell holding a NUL character or invalid UTF-8: the
// file is not CSV text then. The errors' text is meant for the user, about
// line 1 of the file.
func Columns(header []string, required []string, column func(cell string) (string, error)) ([]string, error) {
	names := make([]string, 0, len(header))
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if strings.IndexByte(h, 0) >= 0 {
			return nil, nulError(i + 1)
		}
		if !utf8.ValidString(h) {
			return nil, fmt.Errorf("column %d of the header is not UTF-8 text", i+1)
		}
		name, err := column(strings.TrimSpace(h))
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("column %q appears twice", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	var missing []string
	for _, req := range required {
		if !seen[req] {
			missing = append(missing, req)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header lacks the required columns %s", strings.Join(missing, ", "))
	}
	return names, nil
}

// SniffSize is how much of a file's start Sniff wants to see.
const SniffSize = 512

// Sniff looks at the start of a file (SniffSize bytes, or all of a shorter
// file) before it is parsed. A NUL character in the first line means a
// binary or UTF-16 file, not CSV text: the error says so, naming the
// header's column, and the file need not be read further (a binary file
// may have no line break for a long way). A NUL further on is left to the
// rows, where it is a problem of its line and column.
func Sniff(head []byte) error {
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	i := bytes.IndexByte(head, 0)
	if i < 0 {
		return nil
	}
	return nulError(1 + bytes.Count(head[:i], []byte(",")))
}

func nulError(column int) error {
	return fmt.Errorf("column %d of the header holds a NUL character: the file is not a CSV text file", column)
}

// Unknown is the error for a cell that names no column: it names the cell
// (its Preview) and lists the columns there are.
func Unknown(cell, columns string) error {
	return fmt.Errorf("unknown column %q; the columns are %s", Preview(cell), columns)
}

// Fold returns the column function of a fixed set of columns matched
// without regard to case: "PHONE" names the column "phone".
func Fold(columns ...string) func(string) (string, error) {
	byLower := make(map[string]string, len(columns))
	for _, c := range columns {
		byLower[strings.ToLower(c)] = c
	}
	list := strings.Join(columns, ", ")
	return func(cell string) (string, error) {
		if c, ok := byLower[strings.ToLower(cell)]; ok {
			return c, nil
		}
		return "", Unknown(cell, list)
	}
}

// PreviewRunes is how many characters of a cell a problem of an import
// quotes: enough to find the cell, few enough that a list of problems stays
// small whatever the file holds (a cell may be up to MaxRecordBytes).
const PreviewRunes = 40

// Preview is what a problem of an import quotes of a cell or a header
// name, the one rule of every CSV import: its first PreviewRunes
// characters, then "…" when there are more, as valid UTF-8 (a run of bytes
// that are not becomes one U+FFFD) without NUL characters (each becomes
// U+FFFD), which neither JSON readers nor PostgreSQL take well.
func Preview(s string) string {
	n := 0
	for i := range s {
		if n == PreviewRunes {
			s = s[:i] + "…"
			break
		}
		n++
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}
