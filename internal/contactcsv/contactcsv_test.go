package contactcsv_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/internal/locale"
)

func TestNeutralizeAndRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, out string }{
		{"+15551234567", "'+15551234567"},
		{"=SUM(A1:A2)", "'=SUM(A1:A2)"},
		{"-5", "'-5"},
		{"@cmd", "'@cmd"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"'=x", "''=x"},
		{"''+1", "'''+1"},
		{"'quoted", "'quoted"},
		{"'", "'"},
		{"plain", "plain"},
		{"", ""},
		{"a=b", "a=b"},
	}
	for _, c := range cases {
		if got := contactcsv.Neutralize(c.in); got != c.out {
			t.Errorf("Neutralize(%q) = %q, want %q", c.in, got, c.out)
		}
		if got := contactcsv.Restore(contactcsv.Neutralize(c.in)); got != c.in {
			t.Errorf("Restore(Neutralize(%q)) = %q", c.in, got)
		}
	}
	// Values written by hand keep their meaning.
	if got := contactcsv.Restore("+15551234567"); got != "+15551234567" {
		t.Errorf("hand-written phone changed to %q", got)
	}
}

func FuzzNeutralizeRoundTrip(f *testing.F) {
	for _, s := range []string{"+1", "'=", "''@", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := contactcsv.Neutralize(s)
		if got := contactcsv.Restore(n); got != s {
			t.Fatalf("Restore(Neutralize(%q)) = %q", s, got)
		}
		if n != "" && strings.ContainsRune("=+-@\t\r", rune(n[0])) {
			t.Fatalf("Neutralize(%q) = %q still starts a formula", s, n)
		}
	})
}

func TestNormalizePhone(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"+15551234567":      "+15551234567",
		"+1 (555) 123-4567": "+15551234567",
		"+44 7700.900.123":  "+447700900123",
		"5551234567":        "",
		"+0123456789":       "",
		"+1555":             "",
		"+1234567890123456": "",
		"+1555123456x":      "",
		"++15551234567":     "",
	}
	for in, want := range cases {
		got, ok := contactcsv.NormalizePhone(in)
		if ok != (want != "") || got != want {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"Ada@Example.COM":       "ada@example.com",
		" ada@example.com ":     "ada@example.com",
		"ada@":                  "",
		"ada":                   "",
		"Ada <ada@example.com>": "",
		"ada@localhost":         "",
		"a b@example.com":       "",
	}
	for in, want := range cases {
		got, ok := contactcsv.NormalizeEmail(in)
		if ok != (want != "") || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func readAll(t *testing.T, data string) ([]contactcsv.Row, []contactcsv.Problem) {
	t.Helper()
	r, err := contactcsv.NewReader(strings.NewReader(data))
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	var rows []contactcsv.Row
	var problems []contactcsv.Problem
	for {
		row, ps, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows, problems
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		if len(ps) > 0 {
			problems = append(problems, ps...)
			continue
		}
		rows = append(rows, row)
	}
}

// TestReaderTakesLanguagesAndZonesByTheLocaleRule: the cells go through
// internal/locale, as the directory's users do: canonical tags, the time
// zone database's spelling, links kept, Local refused naming the column.
func TestReaderTakesLanguagesAndZonesByTheLocaleRule(t *testing.T) {
	t.Parallel()
	data := "firstName,lastName,language,timeZone\n" +
		"Ada,Lovelace,en-gb,us/eastern\n" +
		"Grace,Hopper,iw,Asia/Calcutta\n" +
		"Bad,Zone,en,Local\n" +
		"Bad,Tag,xx,UTC\n"
	rows, problems := readAll(t, data)
	if len(rows) != 2 || rows[0].Language != "en-GB" || rows[0].TimeZone != "US/Eastern" ||
		rows[1].Language != "he" || rows[1].TimeZone != "Asia/Calcutta" {
		t.Fatalf("rows %+v", rows)
	}
	if len(problems) != 2 || problems[0].Line != 4 || problems[0].Column != "timeZone" || problems[0].Value != "Local" ||
		problems[1].Line != 5 || problems[1].Column != "language" || problems[1].Value != "xx" {
		t.Fatalf("problems %+v", problems)
	}
}

func TestReaderEdgeCases(t *testing.T) {
	t.Parallel()
	data := "\xEF\xBB\xBFfirstName,lastName,emails,mobilePhones,custom.building,roles\r\n" +
		"Ada,Lovelace,ADA@example.com,'+15551234567,A,Floor warden;First aider\r\n" +
		"\r\n" +
		"\"Grace, Rear Adm.\",\"Hopper \"\"Amazing\"\"\",grace@example.com,,\"multi\nline\",\r\n" +
		",,,,,\r\n" +
		"Bad,Email,not-an-email,,,\r\n" +
		"Bad,Phone,,555-1234,,\r\n" +
		",,,+15550000000,,\r\n" +
		"Too,Few\r\n" +
		"Last,Row,last@example.com,,,"
	rows, problems := readAll(t, data)
	if len(rows) != 4 {
		t.Fatalf("rows %+v", rows)
	}
	ada := rows[0]
	if ada.Line != 2 || ada.FirstName != "Ada" || !reflect.DeepEqual(ada.Emails, []string{"ada@example.com"}) ||
		!reflect.DeepEqual(ada.Phones, []contactcsv.Phone{{Number: "+15551234567", Type: "Mobile", CanText: true, CanCall: true}}) ||
		ada.Custom["building"] != "A" || !reflect.DeepEqual(ada.Roles, []string{"Floor warden", "First aider"}) {
		t.Errorf("ada %+v", ada)
	}
	grace := rows[1]
	if grace.Line != 4 || grace.FirstName != "Grace, Rear Adm." || grace.LastName != `Hopper "Amazing"` || grace.Custom["building"] != "multi\nline" {
		t.Errorf("grace %+v", grace)
	}
	if rows[2].Line != 9 || rows[2].FirstName != "" || rows[2].Phones[0].Number != "+15550000000" {
		t.Errorf("nameless row %+v", rows[2])
	}
	if rows[3].Line != 11 || rows[3].LastName != "Row" {
		t.Errorf("last row %+v", rows[3])
	}
	want := []struct {
		line   int
		column string
	}{{7, "emails"}, {8, "mobilePhones"}, {10, ""}}
	if len(problems) != len(want) {
		t.Fatalf("problems %+v", problems)
	}
	for i, w := range want {
		if problems[i].Line != w.line || problems[i].Column != w.column || problems[i].Message == "" {
			t.Errorf("problem %d = %+v, want line %d column %q", i, problems[i], w.line, w.column)
		}
	}
}

func TestReaderRejectsFiles(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"empty":            "",
		"binary":           "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"missing required": "firstName,emails\nAda,ada@example.com\n",
		"unknown column":   "firstName,lastName,shoeSize\nAda,Lovelace,9\n",
		"duplicate column": "firstName,lastName,email,emails\n",
		"bad custom key":   "firstName,lastName,custom.a b\n",
	}
	for name, data := range cases {
		_, err := contactcsv.NewReader(strings.NewReader(data))
		var fe *contactcsv.FileError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err %v, want a FileError", name, err)
		}
	}
}

func TestWriterReaderRoundTrip(t *testing.T) {
	t.Parallel()
	in := contactcsv.Row{
		ID: 7, ExternalID: "=EXT", FirstName: "@Ada", MiddleName: "-", LastName: "Love, \"lace\"",
		Language: "en-GB", TimeZone: "Europe/London", Emails: []string{"ada@example.com", "a@example.org"},
		Phones: []contactcsv.Phone{{Number: "+15551234567", Type: "Mobile", CanText: true, CanCall: true}, {Number: "+15550000001", Type: "Mobile"},
			{Number: "+15550000002", Type: "Home", CanText: true, CanCall: true}, {Number: "+15557654321", Type: "Work", CanCall: true},
			{Number: "+15550000003", Type: "Other", CanText: true}, {Number: "+15550000004", Type: "Fax"}},
		Roles:     []string{"Floor warden"},
		ChatUsers: []contactcsv.ChatUser{{Platform: "slack", UserID: "U1"}},
		Custom:    map[string]string{"building": "+A", "desk": "12"},
	}
	var buf bytes.Buffer
	w, err := contactcsv.NewWriter(&buf, []string{"building", "desk"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.Contains(text, ",'+15551234567;+15550000001 [none],'+15550000002 [text call],'+15557654321,'+15550000003 [text],'+15550000004,") || !strings.Contains(text, "'=EXT") || !strings.HasSuffix(text, "\r\n") {
		t.Fatalf("export %q", text)
	}
	rows, problems := readAll(t, text)
	if len(problems) > 0 || len(rows) != 1 {
		t.Fatalf("rows %+v problems %+v", rows, problems)
	}
	in.Line = 2
	if !reflect.DeepEqual(rows[0], in) {
		t.Fatalf("round trip\n got %+v\nwant %+v", rows[0], in)
	}
}

// TestReaderRefusesNULCells: a NUL character in a row is a problem naming
// its line and column, never a value.
func TestReaderRefusesNULCells(t *testing.T) {
	data := "firstName,lastName,emails\n" + strings.Repeat("Ada,Lovelace,ada@example.com\n", 30) +
		"Grace,Hop\x00per,grace@example.com\n" + "Bad,\xff,bad@example.com\n"
	rows, problems := readAll(t, data)
	if len(rows) != 30 || len(problems) != 2 {
		t.Fatalf("%d rows, problems %+v", len(rows), problems)
	}
	if p := problems[0]; p.Line != 32 || p.Column != "lastName" || !strings.Contains(p.Message, "NUL") || strings.Contains(p.Value, "\x00") {
		t.Fatalf("NUL problem %+v", p)
	}
	if p := problems[1]; p.Column != "lastName" || !strings.Contains(p.Message, "UTF-8") {
		t.Fatalf("UTF-8 problem %+v", p)
	}
}

// TestTheLargestExportedRowFitsTheRecordBound: a contact with every value
// at its limit, in four-byte characters where it may have them, in a file
// with as many custom-field columns as a tenant may have keys, exports as
// one record within csvheader.MaxRecordBytes and imports again unchanged,
// so the bound on a record never refuses a file the export wrote.
func TestTheLargestExportedRowFitsTheRecordBound(t *testing.T) {
	t.Parallel()
	wide := func(n int) string { return strings.Repeat("\U0001D538", n) } // 𝔸, four bytes
	in := contactcsv.Row{
		ID: 1 << 62, ExternalID: wide(contactcsv.MaxExternalIDLength),
		FirstName: wide(contactcsv.MaxNameLength), MiddleName: wide(contactcsv.MaxNameLength), LastName: wide(contactcsv.MaxNameLength),
		Language: "sr-Latn-RS-u-ca-gregory-nu-latn-x-a", TimeZone: "America/Argentina/ComodRivadavia",
		Custom: map[string]string{},
	}
	if len(in.Language) != locale.MaxLanguageLength {
		t.Fatalf("language %q is %d long", in.Language, len(in.Language))
	}
	// A column for every key a tenant may have, the contact holding as
	// many of them as a contact may.
	var keys []string
	for i := range contactcsv.MaxCustomColumns {
		k := fmt.Sprintf("%064d", i)
		keys = append(keys, k)
		if i < contactcsv.MaxCustomFields {
			in.Custom[k] = wide(contactcsv.MaxCustomValue)
		}
	}
	for i := range contactcsv.MaxListItems {
		local := fmt.Sprintf("%02d", i) + strings.Repeat("l", 62)
		domain := strings.Repeat("d", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("f", 57) + ".com"
		in.Emails = append(in.Emails, local+"@"+domain)
		if len(in.Emails[i]) != contactcsv.MaxEmailLength {
			t.Fatalf("email %d is %d long", i, len(in.Emails[i]))
		}
		in.Phones = append(in.Phones, contactcsv.Phone{Number: fmt.Sprintf("+1555%011d", i), Type: "Other"})
		in.Roles = append(in.Roles, fmt.Sprintf("%02d", i)+wide(contactcsv.MaxRoleLength-2))
		in.ChatUsers = append(in.ChatUsers, contactcsv.ChatUser{Platform: "mattermost", UserID: fmt.Sprintf("%02d", i) + wide(contactcsv.MaxChatUserIDLength-2)})
	}
	var buf bytes.Buffer
	w, err := contactcsv.NewWriter(&buf, keys)
	if err != nil {
		t.Fatal(err)
	}
	header := buf.Len()
	if err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if size := buf.Len() - header; size > csvheader.MaxRecordBytes {
		t.Fatalf("the row exports as %d bytes, over the bound of %d", size, csvheader.MaxRecordBytes)
	} else {
		t.Logf("the largest row exports as %d bytes", size)
	}
	rows, problems := readAll(t, buf.String())
	in.Line = 2
	if len(problems) > 0 || len(rows) != 1 || !reflect.DeepEqual(rows[0], in) {
		t.Fatalf("problems %+v; the row did not come back unchanged", problems)
	}
}

// TestReaderRefusesARowLongerThanTheBound: a row longer than
// csvheader.MaxRecordBytes (a file with no line break, or a quoted field
// that runs on) refuses the file, naming the line it starts on, and the
// reader stops reading soon after the bound instead of holding the row.
func TestReaderRefusesARowLongerThanTheBound(t *testing.T) {
	t.Parallel()
	head := "firstName,lastName\nAda,Lovelace\n\n"
	for name, long := range map[string]string{
		"no line break":          "Grace," + strings.Repeat("h", 5<<20),
		"a quoted field runs on": "Grace,\"Hopper" + strings.Repeat("\nand on", 5<<20/7) + "\nEdsger,Dijkstra\n",
	} {
		src := &countingReader{r: strings.NewReader(head + long)}
		r, err := contactcsv.NewReader(src)
		if err != nil {
			t.Fatal(err)
		}
		var fe *contactcsv.FileError
		for err == nil {
			_, _, err = r.Next()
		}
		if !errors.As(err, &fe) || fe.Line != 4 || !strings.HasPrefix(fe.Error(), "line 4: a row longer than 1 MiB") {
			t.Errorf("%s: %v, want a FileError on line 4", name, err)
		}
		if src.n > csvheader.MaxRecordBytes+128<<10 {
			t.Errorf("%s: read %d bytes of the file", name, src.n)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
