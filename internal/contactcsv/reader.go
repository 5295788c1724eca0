package contactcsv

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/internal/locale"
	"github.com/tocsin/tocsin/internal/names"
)

// Row is one contact of a file.
type Row struct {
	// Line is the file line the row starts on (the header is line 1).
	Line       int
	ID         int64 // 0 when the file gives none
	ExternalID string
	FirstName  string
	MiddleName string
	LastName   string
	Language   string
	TimeZone   string
	Emails     []string // lower case
	Phones     []Phone
	Roles      []string
	ChatUsers  []ChatUser
	// Custom holds the custom fields given in the row; nil when none.
	Custom map[string]string
}

// Phone is one phone number of a row, in E.164 form, with its flags.
type Phone struct {
	Number  string
	Type    string // Mobile, Home, Work, Other or Fax
	CanText bool   // text messages may be sent to it
	CanCall bool   // voice calls may be made to it
}

// ChatUser is a team-chat account of a row.
type ChatUser struct {
	Platform string `json:"platform"`
	UserID   string `json:"userId"`
}

// Problem is what is wrong with one cell (or, with Column empty, one row).
type Problem struct {
	Line    int
	Column  string
	Value   string
	Message string
}

// FileError says the file as a whole cannot be imported: it is not CSV, or
// its header lacks required columns or names unknown ones.
type FileError struct {
	Line    int
	Message string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return e.Message
}

type column struct {
	name      string // a Col* constant, or CustomPrefix+key
	customKey string
}

// Reader reads the rows of a contacts CSV file as a stream: it holds one row
// at a time, never the file, and no row longer than
// csvheader.MaxRecordBytes.
type Reader struct {
	csv  *csvheader.Reader
	cols []column
}

// NewReader reads and checks the header of the file in r (csvheader's rule:
// known columns, none twice, the required ones there). A UTF-8 byte order
// mark is skipped; lines may end in LF or CRLF; fields may be quoted (with
// line breaks and doubled quotes inside); empty lines are skipped. It returns
// a *FileError when the file is not a CSV file of contacts. A NUL character
// in a row is a problem of that row's line and column, wherever it is.
func NewReader(r io.Reader) (*Reader, error) {
	cr := csvheader.NewReader(r, func(c *csv.Reader) {
		c.LazyQuotes = true
		c.ReuseRecord = true
	})
	if err := cr.Sniff(); err != nil {
		return nil, &FileError{Line: 1, Message: err.Error()}
	}
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &FileError{Message: "the file is empty; it needs a header row"}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil, &FileError{Line: 1, Message: "the file is not CSV: " + pe.Err.Error()}
	}
	if err != nil {
		return nil, readError(err)
	}
	names, err := csvheader.Columns(header, RequiredColumns, columnOf)
	if err != nil {
		return nil, &FileError{Line: 1, Message: err.Error()}
	}
	rd := &Reader{csv: cr}
	custom := 0
	for _, name := range names {
		c := column{name: name}
		if key, ok := strings.CutPrefix(name, CustomPrefix); ok {
			c.customKey = key
			custom++
		}
		rd.cols = append(rd.cols, c)
	}
	if custom > MaxCustomColumns {
		return nil, &FileError{Line: 1, Message: fmt.Sprintf("at most %d custom-field columns are allowed", MaxCustomColumns)}
	}
	return rd, nil
}

// readError maps an error of the CSV reader to a *FileError: the rest of
// the file cannot be read as CSV, or a row is longer than
// csvheader.MaxRecordBytes. Other errors (the body's) pass through.
func readError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &FileError{Line: pe.StartLine, Message: "the file is not valid CSV: " + pe.Err.Error()}
	}
	var long *csvheader.RecordTooLongError
	if errors.As(err, &long) {
		return &FileError{Line: long.Line, Message: csvheader.RecordTooLongMessage}
	}
	return fmt.Errorf("read csv: %w", err)
}

// columnOf names the column of a header cell: a column of the layout or
// one of its aliases, case-insensitive, or custom.<key>.
func columnOf(name string) (string, error) {
	if key, ok := cutPrefixFold(name, CustomPrefix); ok {
		if !validCustomKey(key) {
			return "", fmt.Errorf("custom-field column %q: the key must be 1 to %d letters, digits, '_', '-' or '.'", csvheader.Preview(name), MaxCustomKeyLength)
		}
		return CustomPrefix + key, nil
	}
	if col, ok := aliases[strings.ToLower(name)]; ok {
		return col, nil
	}
	return "", csvheader.Unknown(name, strings.Join(Columns, ", ")+" and "+CustomPrefix+"<key> for custom fields")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

func validCustomKey(k string) bool {
	if k == "" || len(k) > MaxCustomKeyLength {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Next returns the next row. When problems is not empty the row must be
// skipped. A row without a name is not a problem here: it may update a
// contact that has one; creating a contact needs a name. At the end of the
// file err is io.EOF; any other error is a *FileError (the rest of the file
// cannot be read as CSV, or a row is longer than csvheader.MaxRecordBytes)
// or an error of the reader's.
func (r *Reader) Next() (row Row, problems []Problem, err error) {
	for {
		rec, err := r.csv.Read()
		if errors.Is(err, io.EOF) {
			return Row{}, nil, io.EOF
		}
		if err != nil {
			return Row{}, nil, readError(err)
		}
		line, _ := r.csv.FieldPos(0)
		if blank(rec) {
			continue
		}
		row.Line = line
		if len(rec) != len(r.cols) {
			return row, []Problem{{Line: line, Message: fmt.Sprintf("expected %d fields as in the header, found %d", len(r.cols), len(rec))}}, nil
		}
		for i, c := range r.cols {
			if p, ok := r.set(&row, c, rec[i]); !ok {
				problems = append(problems, p)
			}
		}
		return row, problems, nil
	}
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func clean(raw string) string {
	return strings.TrimSpace(Restore(strings.TrimSpace(raw)))
}

// set parses one cell into row; it returns the problem when the cell is invalid.
func (r *Reader) set(row *Row, c column, raw string) (Problem, bool) {
	fail := func(msg string) (Problem, bool) {
		return Problem{Line: row.Line, Column: c.name, Value: csvheader.Preview(raw), Message: msg}, false
	}
	if !utf8.ValidString(raw) {
		return fail("not UTF-8 text")
	}
	if strings.IndexByte(raw, 0) >= 0 {
		// PostgreSQL text cannot hold it.
		return fail("contains a NUL character")
	}
	v := clean(raw)
	var err error
	if c.customKey != "" {
		if v == "" {
			return Problem{}, true
		}
		if utf8.RuneCountInString(v) > MaxCustomValue {
			return fail(fmt.Sprintf("longer than %d characters", MaxCustomValue))
		}
		if len(row.Custom) == MaxCustomFields {
			return fail(fmt.Sprintf("the row gives more than %d custom fields, the most a contact may have", MaxCustomFields))
		}
		if row.Custom == nil {
			row.Custom = map[string]string{}
		}
		row.Custom[c.customKey] = v
		return Problem{}, true
	}
	switch c.name {
	case ColID:
		if v == "" {
			return Problem{}, true
		}
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return fail("not a contact id (a positive integer)")
		}
		row.ID = id
	case ColExternalID:
		if utf8.RuneCountInString(v) > MaxExternalIDLength {
			return fail(fmt.Sprintf("longer than %d characters", MaxExternalIDLength))
		}
		if v, err = names.Check(v); err != nil {
			return fail(err.Error())
		}
		row.ExternalID = v
	case ColFirstName, ColMiddleName, ColLastName:
		if utf8.RuneCountInString(v) > MaxNameLength {
			return fail(fmt.Sprintf("longer than %d characters", MaxNameLength))
		}
		if v, err = names.Check(v); err != nil {
			return fail(err.Error())
		}
		switch c.name {
		case ColFirstName:
			row.FirstName = v
		case ColMiddleName:
			row.MiddleName = v
		default:
			row.LastName = v
		}
	case ColLanguage:
		if v != "" {
			lang, err := locale.Language(v)
			if err != nil {
				return fail(err.Error())
			}
			row.Language = lang
		}
	case ColTimeZone:
		if v != "" {
			zone, err := locale.TimeZone(v)
			if err != nil {
				return fail(err.Error())
			}
			row.TimeZone = zone
		}
	case ColEmails:
		items := splitList(v)
		if len(items) > MaxListItems {
			return fail(fmt.Sprintf("more than %d addresses", MaxListItems))
		}
		for _, it := range items {
			e, ok := NormalizeEmail(it)
			if !ok {
				return fail(fmt.Sprintf("%q is not an email address", csvheader.Preview(it)))
			}
			if !slices.Contains(row.Emails, e) {
				row.Emails = append(row.Emails, e)
			}
		}
	case ColMobilePhones, ColHomePhones, ColWorkPhones, ColOtherPhones, ColFaxPhones:
		items := splitList(v)
		if len(items)+len(row.Phones) > MaxListItems {
			return fail(fmt.Sprintf("more than %d phone numbers", MaxListItems))
		}
		for _, it := range items {
			num, canText, canCall, ok := cutFlags(c.name, Restore(it))
			if !ok {
				return fail(fmt.Sprintf("%q: the brackets after a number hold its flags: text, call, text call or none", csvheader.Preview(it)))
			}
			if c.name == ColFaxPhones && (canText || canCall) {
				return fail(fmt.Sprintf("%q: a fax number takes neither texts nor calls", csvheader.Preview(it)))
			}
			n, ok := NormalizePhone(num)
			if !ok {
				return fail(fmt.Sprintf("%q is not a phone number in international form (+ country code and number)", csvheader.Preview(it)))
			}
			if !slices.ContainsFunc(row.Phones, func(p Phone) bool { return p.Number == n }) {
				row.Phones = append(row.Phones, Phone{Number: n, Type: PhoneTypeOfColumn[c.name], CanText: canText, CanCall: canCall})
			}
		}
	case ColRoles:
		items := splitList(v)
		if len(items) > MaxListItems {
			return fail(fmt.Sprintf("more than %d roles", MaxListItems))
		}
		for _, it := range items {
			if utf8.RuneCountInString(it) > MaxRoleLength {
				return fail(fmt.Sprintf("a role is longer than %d characters", MaxRoleLength))
			}
			if it, err = names.Check(it); err != nil {
				return fail(fmt.Sprintf("role %q %s", it, err))
			}
			if !slices.Contains(row.Roles, it) {
				row.Roles = append(row.Roles, it)
			}
		}
	case ColChatUsers:
		items := splitList(v)
		if len(items) > MaxListItems {
			return fail(fmt.Sprintf("more than %d chat users", MaxListItems))
		}
		for _, it := range items {
			platform, id, ok := strings.Cut(it, ":")
			platform = strings.ToLower(strings.TrimSpace(platform))
			id = strings.TrimSpace(id)
			if !ok || !slices.Contains(ChatPlatforms, platform) || id == "" || utf8.RuneCountInString(id) > MaxChatUserIDLength {
				return fail(fmt.Sprintf("%q is not platform:userId with a platform of %s", csvheader.Preview(it), strings.Join(ChatPlatforms, ", ")))
			}
			row.ChatUsers = append(row.ChatUsers, ChatUser{Platform: platform, UserID: id})
		}
	}
	return Problem{}, true
}

func splitList(v string) []string {
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ListSeparator)
	out := parts[:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NormalizeEmail trims and lower-cases an email address and reports whether
// it is a plain address (no display name, no angle brackets).
func NormalizeEmail(v string) (string, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" || len(v) > MaxEmailLength || !strings.Contains(v, "@") {
		return "", false
	}
	a, err := mail.ParseAddress(v)
	if err != nil || a.Name != "" || a.Address != v {
		return "", false
	}
	at := strings.LastIndexByte(v, '@')
	if !strings.Contains(v[at+1:], ".") {
		return "", false
	}
	return v, true
}

// NormalizePhone removes spaces, dots, dashes and parentheses from a phone
// number and reports whether what is left is in E.164 form: a '+', a
// country code not starting with 0, and 7 to 15 digits in all.
func NormalizePhone(v string) (string, bool) {
	var b strings.Builder
	b.Grow(len(v))
	for i, r := range strings.TrimSpace(v) {
		switch {
		case r == '+' && i == 0:
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", false
		}
	}
	n := b.String()
	if len(n) < 8 || len(n) > 16 || n[0] != '+' || n[1] == '0' {
		return "", false
	}
	return n, true
}
