package recipients_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestCreateFromFileAnswerIsBounded: whatever a file's cells hold, each
// listed error quotes at most a preview of its cell, in its value and in
// its message, so an error is under 1 KiB and the answer under 1 KiB per
// listed error. Cells of 100,000 characters in every column that quotes
// them, and cells whose characters JSON and Go's quoting write longest.
func TestCreateFromFileAnswerIsBounded(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	long := strings.Repeat("x", 100_000)
	columns := []string{"emails", "mobilePhones", "faxPhones", "homePhones", "chatUsers", "custom.note"}
	var file strings.Builder
	file.WriteString("firstName,lastName," + strings.Join(columns, ",") + "\n")
	for r := range 8 {
		fmt.Fprintf(&file, "B%d,V", r)
		for range columns {
			file.WriteString("," + long)
		}
		file.WriteString("\n")
	}
	// Control characters JSON writes as \u0001, characters Go's %q writes
	// as \U000e0001, and a fax number with flags: each message quotes its
	// item, and a list cell's item is the whole cell here.
	for _, cell := range []string{strings.Repeat("\x01", 2000), strings.Repeat("\U000E0001", 2000), "'+1555" + strings.Repeat("\u2028", 2000) + " [text]"} {
		file.WriteString("W,V")
		for range columns {
			file.WriteString(`,"` + cell + `"`)
		}
		file.WriteString("\n")
	}
	r := upload(t, s, tenant, tok, "bounded", file.String())
	if r.Status != http.StatusCreated {
		t.Fatalf("%d %.500s", r.Status, r.Body)
	}
	var res model.CreateDistributionListFromFileResponse
	r.JSON(t, &res)
	want := 11 * len(columns)
	if res.Skipped != 11 || res.ErrorCount != int64(want) || len(res.Errors) != want {
		t.Fatalf("%d skipped, %d errors, %d listed", res.Skipped, res.ErrorCount, len(res.Errors))
	}
	if len(r.Body) > want<<10 {
		t.Errorf("the answer is %d bytes for %d errors", len(r.Body), want)
	}
	for _, e := range res.Errors {
		if n := utf8.RuneCountInString(e.Value); n > csvheader.PreviewRunes+1 {
			t.Errorf("line %d, %s: a value of %d characters", e.Line, e.Column, n)
		}
		if len(e.Message) > 600 {
			t.Errorf("line %d, %s: a message of %d bytes: %.200q", e.Line, e.Column, len(e.Message), e.Message)
		}
	}
	if e := res.Errors[0]; e.Column != "emails" || e.Value != strings.Repeat("x", csvheader.PreviewRunes)+"…" ||
		e.Message != `"`+e.Value+`" is not an email address` {
		t.Errorf("first error %+v", e)
	}
}
