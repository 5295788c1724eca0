package etn

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// MaxPointsPerList bounds one imported address-point list.
const MaxPointsPerList = 200_000

// Point is one address point: a phone number at a place.
type Point = channelstate.AddressPoint

// RowError is a CSV row that could not be imported.
type RowError struct {
	Line    int
	Message string
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

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

// ParseCSV reads an address-point list. Rows with errors are reported and
// left out, with the line they start on (the header is line 1; empty lines
// and line breaks inside quoted fields count); a header that names an
// unknown column, names one twice or lacks a required one is an error, and
// so is a file that is not CSV text and a row longer than
// csvheader.MaxRecordBytes (a *csvheader.RecordTooLongError: the rest of
// the file cannot be read).
func ParseCSV(r io.Reader) ([]Point, []RowError, error) {
	cr := csvheader.NewReader(r, func(c *csv.Reader) { c.TrimLeadingSpace = true })
	header, err := cr.Read()
	var long *csvheader.RecordTooLongError
	if errors.As(err, &long) {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the header row: %w", err)
	}
	names, err := csvheader.Columns(header, requiredColumns, csvheader.Fold(csvColumns...))
	if err != nil {
		return nil, nil, err
	}
	col := map[string]int{}
	for i, name := range names {
		col[name] = i
	}
	var pts []Point
	var bad []RowError
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe):
			bad = append(bad, RowError{Line: pe.StartLine, Message: pe.Error()})
			continue
		case err != nil:
			return nil, nil, err
		}
		line, _ := cr.FieldPos(0)
		get := func(c string) string {
			i, ok := col[c]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		p := Point{Phone: get(colPhone), Name: get(colName), Address: get(colAddress), ExternalID: get(colExternalID)}
		lat, err1 := strconv.ParseFloat(get(colLatitude), 64)
		lng, err2 := strconv.ParseFloat(get(colLongitude), 64)
		switch {
		case !e164.MatchString(p.Phone):
			bad = append(bad, RowError{Line: line, Message: fmt.Sprintf("phone %q is not an E.164 number", p.Phone)})
		case err1 != nil || err2 != nil || lat < -90 || lat > 90 || lng < -180 || lng > 180:
			bad = append(bad, RowError{Line: line, Message: "latitude and longitude must be numbers within -90..90 and -180..180"})
		default:
			p.Latitude, p.Longitude = lat, lng
			pts = append(pts, p)
		}
		if len(pts) > MaxPointsPerList {
			return nil, nil, fmt.Errorf("a list holds at most %d points", MaxPointsPerList)
		}
	}
	return pts, bad, nil
}

// Points stores address-point lists: Replace makes points the content of
// a tenant's list in one transaction, Lists lists them by name, Delete
// removes one (storage.ErrNotFound when it has no points).
type Points = channelstate.AddressPoints
