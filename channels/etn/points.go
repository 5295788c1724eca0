package etn

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// MaxPointsPerList bounds one imported address-point list.
const MaxPointsPerList = 200_000

// errTooManyPoints ends the points of a list past MaxPointsPerList.
var errTooManyPoints = fmt.Errorf("a list holds at most %d points", MaxPointsPerList)

// Point is one address point: a phone number at a place.
type Point = channelstate.AddressPoint

// RowError is a CSV row that could not be imported.
type RowError struct {
	Line    int
	Message string
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// decimal is a coordinate as a CSV writes one: digits with an optional
// sign, fraction and exponent. strconv.ParseFloat also reads NaN, Inf,
// hexadecimal floats and digits separated by underscores; NaN passes every
// range check and the table refuses it, and the others are no spreadsheet's.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// CSV columns of an address-point list, as they are spelled in messages;
// the header matches them case-insensitively.
const (
	colPhone      = "phone"
	colLatitude   = "latitude"
	colLongitude  = "longitude"
	colName       = "name"
	colAddress    = "address"
	colExternalID = "externalId"
)

// csvColumns are the columns of an address-point list, and requiredColumns
// those every list must have. The header names them in any order; an
// unknown column or one named twice rejects the file, as in the contacts
// import: a typo would otherwise lose data, and a repeated phone or
// latitude would send calls to the wrong place.
var (
	csvColumns      = []string{colPhone, colLatitude, colLongitude, colName, colAddress, colExternalID}
	requiredColumns = []string{colPhone, colLatitude, colLongitude}
)

// MaxReportedRows is the most rejected rows a Reader keeps (the first
// ones); Rejected counts them all.
const MaxReportedRows = 100

// Reader reads an address-point list (CSV) as it arrives: it holds one row
// at a time, never the file. Rows with errors are counted and left out,
// the first MaxReportedRows kept with the line they start on (the header
// is line 1; empty lines and line breaks inside quoted fields count).
type Reader struct {
	err      error
	cr       *csvheader.Reader
	col      map[string]int
	points   int
	rejected int
	problems []RowError
}

// NewReader reads and checks the header of the list in r: a header that
// names an unknown column, names one twice or lacks a required one is an
// error, and so is one that cannot be read (see Points).
func NewReader(r io.Reader) (*Reader, error) {
	cr := csvheader.NewReader(&textReader{r: r, line: 1}, func(c *csv.Reader) {
		c.TrimLeadingSpace = true
		c.ReuseRecord = true
	})
	header, err := cr.Read()
	var long *csvheader.RecordTooLongError
	if errors.As(err, &long) || errors.As(err, new(*TextError)) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read the header row: %w", err)
	}
	names, err := csvheader.Columns(header, requiredColumns, csvheader.Fold(csvColumns...))
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, name := range names {
		col[name] = i
	}
	return &Reader{cr: cr, col: col}, nil
}

// Points yields the list's points in the order of the file. When the rest
// of the file cannot be read it yields an error and stops: a file that is
// not CSV text (a *TextError naming the line of a NUL character or of
// bytes that are not UTF-8), a row longer than csvheader.MaxRecordBytes (a
// *csvheader.RecordTooLongError: where it ends cannot be found), or more
// than MaxPointsPerList points. The file is then refused as a whole.
func (r *Reader) Points() iter.Seq2[Point, error] {
	return func(yield func(Point, error) bool) {
		for {
			rec, err := r.cr.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			var pe *csv.ParseError
			switch {
			case errors.As(err, &pe):
				r.reject(pe.StartLine, pe.Error())
				continue
			case err != nil:
				r.err = err
				yield(Point{}, err)
				return
			}
			p, line, problem := r.point(rec)
			if problem != "" {
				r.reject(line, problem)
				continue
			}
			if r.points++; r.points > MaxPointsPerList {
				r.err = errTooManyPoints
				yield(Point{}, r.err)
				return
			}
			if !yield(p, nil) {
				return
			}
		}
	}
}

// point reads the point of record rec, or says what is wrong with it; line
// is the line it starts on.
func (r *Reader) point(rec []string) (p Point, line int, problem string) {
	line, _ = r.cr.FieldPos(0)
	get := func(c string) string {
		i, ok := r.col[c]
		if !ok || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	p = Point{Phone: get(colPhone), Name: get(colName), Address: get(colAddress), ExternalID: get(colExternalID)}
	lat, err1 := coordinate(get(colLatitude))
	lng, err2 := coordinate(get(colLongitude))
	switch {
	case !e164.MatchString(p.Phone):
		return p, line, fmt.Sprintf("phone %q is not an E.164 number", csvheader.Preview(p.Phone))
	case err1 != nil || err2 != nil || !(lat >= -90 && lat <= 90) || !(lng >= -180 && lng <= 180):
		return p, line, "latitude and longitude must be numbers within -90..90 and -180..180"
	}
	p.Latitude, p.Longitude = lat, lng
	return p, line, ""
}

// coordinate reads a latitude or longitude written as a decimal number.
func coordinate(s string) (float64, error) {
	if !decimal.MatchString(s) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(s, 64)
}

func (r *Reader) reject(line int, message string) {
	r.rejected++
	if len(r.problems) < MaxReportedRows {
		r.problems = append(r.problems, RowError{Line: line, Message: message})
	}
}

// Err is the error that ended Points, if any.
func (r *Reader) Err() error { return r.err }

// Rejected is how many rows Points left out so far.
func (r *Reader) Rejected() int { return r.rejected }

// Problems are the first MaxReportedRows rows Points left out, in the
// order of the file.
func (r *Reader) Problems() []RowError { return r.problems }

// TextError is a NUL character or bytes that are not UTF-8 in a list:
// the file is not CSV text, and PostgreSQL text holds neither.
type TextError struct {
	// Line is the line of the first such byte (the header is line 1).
	Line    int
	Message string
}

func (e *TextError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Message) }

// textReader passes on the bytes of r as they come and fails with a
// *TextError at the first NUL character or byte that is not UTF-8, having
// passed on every byte before it.
type textReader struct {
	r    io.Reader
	line int
	part []byte // the start of a character the last read cut off
	err  error
}

func (t *textReader) Read(p []byte) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.r.Read(p)
	if i, msg := t.check(p[:n]); msg != "" {
		t.err = &TextError{Line: t.line, Message: msg}
		return i, t.err
	}
	if err == io.EOF && len(t.part) > 0 {
		t.err = &TextError{Line: t.line, Message: msgUTF8}
		return n, t.err
	}
	return n, err
}

const (
	msgNUL  = "contains a NUL character"
	msgUTF8 = "is not valid UTF-8"
)

// check looks at the next bytes b of the file. It returns how many of
// them come before the first bad one and what is wrong with that one, or
// len(b) and "".
func (t *textReader) check(b []byte) (int, string) {
	i := 0
	if len(t.part) > 0 {
		// Complete the character the last read cut off.
		k := min(len(b), utf8.UTFMax-len(t.part))
		c := append(t.part, b[:k]...)
		if !utf8.FullRune(c) {
			t.part = c
			return len(b), ""
		}
		r, size := utf8.DecodeRune(c)
		if r == utf8.RuneError && size == 1 {
			return 0, msgUTF8
		}
		i = size - len(t.part)
		t.part = t.part[:0]
	}
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			switch c {
			case 0:
				return i, msgNUL
			case '\n':
				t.line++
			}
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			t.part = append(t.part[:0], b[i:]...)
			return len(b), ""
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i, msgUTF8
		}
		i += size
	}
	return len(b), ""
}

// Points stores address-point lists: Replace makes points the content of
// a tenant's list in one transaction, Lists lists them by name, Delete
// removes one (storage.ErrNotFound when it has no points).
type Points = channelstate.AddressPoints
