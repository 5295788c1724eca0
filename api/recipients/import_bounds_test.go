package recipients_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/csvheader"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
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

// TestCreateFromFileKeepsCustomFieldsWithinTheirLimits: an import that
// merges new custom-field keys into a contact's is held to the 200 a
// contact may have (a row problem naming the first column past them,
// nothing of the row written), however the fields came; a row that adds no
// key passes, also for a contact given more before the limit; and a row
// creating a contact gives at most 200.
func TestCreateFromFileKeepsCustomFieldsWithinTheirLimits(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	file := func(ext, first, prefix string, from, n int) string {
		var head, row strings.Builder
		head.WriteString("externalId,firstName,lastName")
		fmt.Fprintf(&row, "%s,%s,Limit", ext, first)
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&head, ",custom.%s%03d", prefix, i)
			fmt.Fprintf(&row, ",%s%d", prefix, i)
		}
		return head.String() + "\n" + row.String() + "\n"
	}
	fields := func(ext string) map[string]string {
		t.Helper()
		c := find(t, s, tok, "", map[string]any{"externalId": ext})
		if len(c.Items) != 1 {
			t.Fatalf("contact %s: %+v", ext, c.Items)
		}
		return c.Items[0].CustomFields
	}
	max := contactcsv.MaxCustomFields
	if res := mustUpload(t, s, tenant, tok, "a", file("C1", "Ann", "a", 0, max)); res.Created != 1 {
		t.Fatalf("first import %+v", res)
	}
	res := mustUpload(t, s, tenant, tok, "b", file("C1", "Anne", "b", 0, max))
	if res.Updated != 0 || res.Skipped != 1 || len(res.Errors) != 1 || res.Errors[0].Line != 2 || res.Errors[0].Column != "custom.b000" ||
		res.Errors[0].Value != "b0" || !strings.Contains(res.Errors[0].Message, "would have 400 custom fields, more than the 200") {
		t.Fatalf("second import %+v", res)
	}
	if f := fields("C1"); len(f) != max || f["a000"] != "a0" {
		t.Fatalf("C1 has %d custom fields", len(f))
	}
	// Filling the contact up to the limit passes, one key more does not.
	half := mustUpload(t, s, tenant, tok, "c", file("C2", "Bob", "a", 0, max/2))
	if half.Created != 1 {
		t.Fatalf("third import %+v", half)
	}
	if res := mustUpload(t, s, tenant, tok, "d", file("C2", "Bob", "b", 0, max/2)); res.Updated != 1 {
		t.Fatalf("fourth import %+v", res)
	}
	res = mustUpload(t, s, tenant, tok, "e", file("C2", "Bob", "c", 7, 1))
	if res.Skipped != 1 || res.Errors[0].Column != "custom.c007" || !strings.Contains(res.Errors[0].Message, "would have 201 custom fields") {
		t.Fatalf("fifth import %+v", res)
	}
	// A new contact gives at most 200: the 201st column is the problem.
	res = mustUpload(t, s, tenant, tok, "f", file("C3", "Cid", "a", 0, max+1))
	if res.Created != 0 || res.Skipped != 1 || res.Errors[0].Column != fmt.Sprintf("custom.a%03d", max) {
		t.Fatalf("sixth import %+v", res)
	}
	// A contact holding more, as stored before the limit, keeps them and
	// takes new values of its keys, not new keys.
	legacy := map[string]string{}
	for i := range 50 {
		legacy[fmt.Sprintf("old%02d", i)] = "x"
	}
	if err := storagetest.AddCustomFields(context.Background(), s.DB, tenant, personID(t, s, tenant, "C1"), legacy); err != nil {
		t.Fatal(err)
	}
	if res := mustUpload(t, s, tenant, tok, "g", file("C1", "Ann", "a", 0, 3)); res.Unchanged != 1 || res.Skipped != 0 {
		t.Fatalf("seventh import %+v", res)
	}
	res = mustUpload(t, s, tenant, tok, "h", "externalId,firstName,lastName,custom.a001,custom.old07\nC1,Ann,Limit,new,newer\n")
	if res.Updated != 1 || res.Skipped != 0 {
		t.Fatalf("eighth import %+v", res)
	}
	if f := fields("C1"); len(f) != max+50 || f["a001"] != "new" || f["old07"] != "newer" {
		t.Fatalf("C1 has %d custom fields, a001 %q, old07 %q", len(f), f["a001"], f["old07"])
	}
	res = mustUpload(t, s, tenant, tok, "i", "externalId,firstName,lastName,custom.z\nC1,Ann,Limit,new\n")
	if res.Skipped != 1 || res.Errors[0].Column != "custom.z" || !strings.Contains(res.Errors[0].Message, "would have 251 custom fields") {
		t.Fatalf("ninth import %+v", res)
	}
}

// TestCreateFromFileKeepsTheTenantsCustomKeysWithinTheLimit: a tenant's
// contacts hold at most 1,000 different custom-field keys, as many as a
// file may have columns: a row bringing one more is a problem naming its
// column. Keys of contacts deleted since no longer count.
func TestCreateFromFileKeepsTheTenantsCustomKeysWithinTheLimit(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	per, keys := contactcsv.MaxCustomFields, contactcsv.MaxCustomColumns
	users := make([]int64, keys/per)
	var file strings.Builder
	file.WriteString("externalId,firstName,lastName")
	for k := range keys {
		fmt.Fprintf(&file, ",custom.k%04d", k)
	}
	file.WriteString("\n")
	for u := range users {
		users[u] = directoryUser(t, s, tenant, fmt.Sprintf("K%d", u), "Key", "Holder")
		fmt.Fprintf(&file, "K%d,,", u)
		file.WriteString(strings.Repeat(",", u*per) + strings.Repeat(",v", per) + strings.Repeat(",", keys-(u+1)*per) + "\n")
	}
	if res := mustUpload(t, s, tenant, tok, "all keys", file.String()); res.Updated != int64(len(users)) || res.Skipped != 0 {
		t.Fatalf("first import %+v", res)
	}
	next := "externalId,firstName,lastName,custom.k0001,custom.new1\nN1,New,One,v,v\nN2,New,Two,v,\n"
	res := mustUpload(t, s, tenant, tok, "one more", next)
	if res.Created != 1 || res.Skipped != 1 || res.Errors[0].Line != 2 || res.Errors[0].Column != "custom.new1" ||
		!strings.Contains(res.Errors[0].Message, "more than 1000 different custom fields") {
		t.Fatalf("second import %+v", res)
	}
	if r := s.Do(t, http.MethodDelete, fmt.Sprintf("/%s/directory/staff/users/%d", tenant, users[0]), tok, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete user: %d %s", r.Status, r.Body)
	}
	res = mustUpload(t, s, tenant, tok, "fits again", next)
	if res.Created != 1 || res.Unchanged != 1 || res.Skipped != 0 {
		t.Fatalf("third import %+v", res)
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
