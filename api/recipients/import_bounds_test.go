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

// TestCreateFromFileRowMatchingSeveralContactsIsAProblem: a row whose
// email address, phone number or external id several contacts hold cannot
// tell which one it means: it is a problem naming the column, and no
// contact changes.
func TestCreateFromFileRowMatchingSeveralContactsIsAProblem(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	directoryUser(t, s, tenant, "S1", "Sam", "One")
	directoryUser(t, s, tenant, "S2", "Sue", "Two")
	body := map[string]any{"name": map[string]any{"first": "Sid", "last": "Other"}, "externalId": "S1"}
	s.Create(t, "/"+tenant+"/directory/students/users", tok, body)
	mustUpload(t, s, tenant, tok, "shared", "id,externalId,firstName,lastName,emails,homePhones\n"+
		fmt.Sprint(personID(t, s, tenant, "S2"))+",,,,shared@example.com,+15553000001\n"+
		fmt.Sprint(find(t, s, tok, "", map[string]any{"name": "Sam"}).Items[0].ID)+",,,,shared@example.com,+15553000001\n")
	before := find(t, s, tok, "?sort=id", nil)
	res := mustUpload(t, s, tenant, tok, "merge", "externalId,firstName,lastName,emails,homePhones\n"+
		",Merged,Person,shared@example.com,\n"+
		",Merged,Person,,+15553000001\n"+
		"S1,Merged,Person,,\n")
	want := []model.DistributionListError{
		{Line: 2, Column: "emails", Value: "shared@example.com"},
		{Line: 3, Column: "homePhones", Value: "+15553000001"},
		{Line: 4, Column: "externalId", Value: "S1"},
	}
	if res.Created != 0 || res.Updated != 0 || res.Skipped != 3 || len(res.Errors) != len(want) {
		t.Fatalf("import %+v", res)
	}
	for i, w := range want {
		if e := res.Errors[i]; e.Line != w.Line || e.Column != w.Column || e.Value != w.Value || !strings.Contains(e.Message, "matches several contacts") {
			t.Errorf("error %d = %+v, want %+v", i, e, w)
		}
	}
	if after := find(t, s, tok, "?sort=id", nil); fmt.Sprint(after.Items) != fmt.Sprint(before.Items) {
		t.Errorf("contacts changed:\n%+v\n%+v", before.Items, after.Items)
	}
}
