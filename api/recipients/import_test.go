package recipients_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestCreateFromFileCSVEdgeCases(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	// UTF-8 with a byte order mark, CRLF line ends, quoted fields with
	// commas, doubled quotes and a line break, empty lines, and bad rows
	// among good ones.
	file := "\xEF\xBB\xBFexternalId,firstName,lastName,emails,mobilePhones,custom.note\r\n" + // line 1
		"A1,José,Núñez,jose@example.com,'+34600000001,\"café, con leche\"\r\n" + // 2
		"\r\n" + // 3
		"A2,\"Grace, Rear Adm.\",\"Hopper \"\"Amazing\"\"\",grace@example.com,+1 (555) 000-0002,\"two\r\nlines\"\r\n" + // 4-5
		"A3,Bad,Email,grace@,+15550000003,\r\n" + // 6
		"A4,Bad,Phone,bad@example.com,555-0004,\r\n" + // 7
		"A5,,,nameless@example.com,,\r\n" + // 8
		"A1,Jose,Again,jose2@example.com,,\r\n" + // 9: duplicate external id
		"A6,Too,Few\r\n" + // 10
		",,,,,\r\n" + // 11: blank
		"A7,Last,Row,last@example.com,+15550000007,\r\n" // 12
	res := mustUpload(t, s, tenant, tok, "edge cases", file)
	if res.Rows != 8 || res.Created != 3 || res.Updated != 0 || res.Unchanged != 0 || res.Skipped != 5 || res.ErrorCount != 5 {
		t.Fatalf("counts %+v", res)
	}
	if res.DistributionList.Name != "edge cases" || res.DistributionList.Description != "test list" || res.DistributionList.MemberCount != 3 {
		t.Fatalf("list %+v", res.DistributionList)
	}
	want := []model.DistributionListError{
		{Line: 6, Column: "emails", Value: "grace@"},
		{Line: 7, Column: "mobilePhones", Value: "555-0004"},
		{Line: 8, Column: "lastName"},
		{Line: 9, Column: "externalId", Value: "A1"},
		{Line: 10},
	}
	if len(res.Errors) != len(want) {
		t.Fatalf("errors %+v", res.Errors)
	}
	for i, w := range want {
		e := res.Errors[i]
		if e.Line != w.Line || e.Column != w.Column || e.Value != w.Value || e.Message == "" {
			t.Errorf("error %d = %+v, want %+v", i, e, w)
		}
	}
	if !strings.Contains(res.Errors[3].Message, "line 2") {
		t.Errorf("duplicate does not name the first line: %+v", res.Errors[3])
	}

	got := find(t, s, tok, "?sort=externalId", nil)
	if ids := externalIDs(got); !reflect.DeepEqual(ids, []string{"A1", "A2", "A7"}) {
		t.Fatalf("contacts %v", ids)
	}
	jose, grace := got.Items[0], got.Items[1]
	if jose.Name.First != "José" || jose.Name.Last != "Núñez" || jose.Phones[0].Number != "+34600000001" ||
		jose.CustomFields["note"] != "café, con leche" || jose.Emails[0].Address != "jose@example.com" {
		t.Fatalf("jose %+v", jose)
	}
	if grace.Name.First != "Grace, Rear Adm." || grace.Name.Last != `Hopper "Amazing"` || grace.Phones[0].Number != "+15550000002" ||
		grace.CustomFields["note"] != "two\nlines" {
		t.Fatalf("grace %+v", grace)
	}
}

func TestCreateFromFileMatchesAndUpdates(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	mustUpload(t, s, tenant, tok, "first", "externalId,firstName,lastName,emails,mobilePhones,language\n"+
		"X1,Ann,One,ann@example.com,+15551000001,en\n"+
		",Bob,Two,bob@example.com,,en\n"+
		",Cid,Three,,+15551000003,en\n"+
		"X4,Dee,Four,dee@example.com,,en\n")
	dee := personID(t, s, tenant, "X4")
	res := mustUpload(t, s, tenant, tok, "second", "id,externalId,firstName,lastName,emails,mobilePhones,language\n"+
		",X1,Anne,,,,\n"+ // by external id: first name changes
		",,,,BOB@example.com,,de\n"+ // by email: language changes
		",,,,cid@example.com,+1 555 100 0003,\n"+ // by phone: an email is added
		fmt.Sprint(dee)+",,,,,,en\n"+ // by id, nothing changes
		",X5,Eve,Five,eve@example.com,,\n") // new
	if res.Created != 1 || res.Updated != 3 || res.Unchanged != 1 || res.Skipped != 0 {
		t.Fatalf("counts %+v", res)
	}
	all := find(t, s, tok, "?sort=id", nil)
	if all.Paging.TotalCount != 5 {
		t.Fatalf("%d contacts", all.Paging.TotalCount)
	}
	byName := map[string]model.Contact{}
	for _, c := range all.Items {
		byName[c.Name.Last] = c
	}
	if c := byName["One"]; c.Name.First != "Anne" || c.Emails[0].Address != "ann@example.com" {
		t.Errorf("by external id %+v", c)
	}
	if c := byName["Two"]; c.Language != "de" || c.Name.First != "Bob" {
		t.Errorf("by email %+v", c)
	}
	if c := byName["Three"]; len(c.Emails) != 1 || c.Emails[0].Address != "cid@example.com" || len(c.Phones) != 1 {
		t.Errorf("by phone %+v", c)
	}
	second := find(t, s, tok, "", map[string]any{"distributionListId": res.DistributionList.ID})
	if second.Paging.TotalCount != 5 {
		t.Fatalf("second list has %d members", second.Paging.TotalCount)
	}
}

func TestCreateFromFileRejectsBadRequestsAndChangesNothing(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t, func(c *config.Config) { c.FileSizeLimit, c.ImportSizeLimit = 64<<10, 64<<10 })
	tenant, tok := s.NewTenant(t)
	path := fmt.Sprintf("/v4/%s/distributionLists/createFromFile", tenant)
	mustUpload(t, s, tenant, tok, "taken", "firstName,lastName\nAda,Lovelace\n")
	good := "firstName,lastName,emails\nNew,Person,new@example.com\n"
	big := "firstName,lastName\n" + strings.Repeat("Someone,Else\n", 6000)

	cases := []struct {
		name   string
		pairs  []string
		ct     string
		status int
		field  string
	}{
		{"not CSV", []string{"name", "x", "file", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"}, "", 400, "body.file"},
		{"missing required columns", []string{"name", "x", "file", "emails\nnew@example.com\n"}, "", 400, "body.file"},
		{"unknown column", []string{"name", "x", "file", "firstName,lastName,shoeSize\nA,B,9\n"}, "", 400, "body.file"},
		{"empty file", []string{"name", "x", "file", ""}, "", 400, "body.file"},
		{"no file", []string{"name", "x"}, "", 400, "body.file"},
		{"no name", []string{"file", good}, "", 400, "body.name"},
		{"name too long", []string{"name", strings.Repeat("n", 201), "file", good}, "", 400, "body.name"},
		{"unknown part", []string{"name", "x", "color", "red", "file", good}, "", 400, "body.color"},
		{"name twice", []string{"name", "x", "name", "y", "file", good}, "", 400, "body.name"},
		{"file twice", []string{"name", "x", "file", good, "file", good}, "", 400, "body.file"},
		{"a file as an attachment", []string{"name", "x"}, "attachment", 400, "body.file"},
		{"files in a multipart/mixed part", []string{"name", "x"}, "mixed", 400, "body.file"},
		{"a part without a name", []string{"name", "x"}, "nameless", 400, "body"},
		{"name taken, given first", []string{"name", "taken", "file", good}, "", 409, ""},
		{"name taken, given last", []string{"file", good, "name", "taken"}, "", 409, ""},
		{"too large", []string{"name", "x", "file", big}, "", 413, ""},
		{"not multipart", nil, "application/json", 415, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r stacktest.Response
			switch c.ct {
			case "application/json":
				r = s.Do(t, http.MethodPost, path, tok, bytes.NewReader([]byte(`{"name":"x"}`)), "Content-Type", c.ct)
			case "attachment", "mixed", "nameless":
				// A part Go's multipart writer does not write.
				part := map[string]string{
					"attachment": "Content-Disposition: attachment; name=\"file\"; filename=\"a.csv\"\r\n\r\n" + good,
					"mixed": "Content-Disposition: form-data; name=\"file\"\r\nContent-Type: multipart/mixed; boundary=C\r\n\r\n" +
						"--C\r\nContent-Disposition: attachment; filename=\"a.csv\"\r\n\r\n" + good + "\r\n--C\r\n" +
						"Content-Disposition: attachment; filename=\"b.csv\"\r\n\r\n" + good + "\r\n--C--",
					"nameless": "Content-Disposition: form-data; filename=\"a.csv\"\r\n\r\n" + good,
				}[c.ct]
				body := "--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--B\r\n" + part + "\r\n--B--\r\n"
				r = s.Do(t, http.MethodPost, path, tok, strings.NewReader(body), "Content-Type", "multipart/form-data; boundary=B")
			default:
				body, ct := form(t, c.pairs...)
				r = s.Do(t, http.MethodPost, path, tok, body, "Content-Type", ct)
			}
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q", ct)
			}
			if c.field != "" && !strings.Contains(string(r.Body), `"location":"`+c.field+`"`) {
				t.Fatalf("problem does not name %s: %s", c.field, r.Body)
			}
		})
	}
	if n := contactCount(t, s, tenant); n != 1 {
		t.Fatalf("rejected files changed contacts: %d people", n)
	}
	if n := listCount(t, s, tenant); n != 1 {
		t.Fatalf("rejected files made lists: %d", n)
	}
	// Another tenant's path is a 404 and imports nothing.
	body, ct := form(t, "name", "x", "file", good)
	if r := s.Do(t, http.MethodPost, "/v4/42/distributionLists/createFromFile", tok, body, "Content-Type", ct); r.Status != http.StatusNotFound {
		t.Fatalf("other tenant: %d", r.Status)
	}
}

func TestCreateFromFile100kRows(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	const n = 100_000
	var b strings.Builder
	b.WriteString("externalId,firstName,lastName,emails,mobilePhones,custom.site\r\n")
	for i := range n {
		fmt.Fprintf(&b, "P%06d,First%d,Last%d,p%d@example.com,+1555%07d,S%d\r\n", i, i, i%1000, i, i, i%10)
	}
	res := mustUpload(t, s, tenant, tok, "big", b.String())
	if res.Rows != n || res.Created != n || res.Skipped != 0 || res.DistributionList.MemberCount != n {
		t.Fatalf("import %+v", res)
	}
	if got, err := storagetest.PhoneCount(context.Background(), s.DB, tenant); err != nil || got != n {
		t.Fatalf("%d phones (%v)", got, err)
	}
	page := find(t, s, tok, "?pageSize=2", map[string]any{"email": "p99999@example.com"})
	if page.Paging.TotalCount != 1 || page.Items[0].ExternalID != "P099999" || page.Items[0].Phones[0].Number != "+15550099999" {
		t.Fatalf("find %+v", page)
	}
	if c := find(t, s, tok, "?pageSize=1", map[string]any{"customFields": map[string]string{"site": "S3"}}); c.Paging.TotalCount != n/10 {
		t.Fatalf("custom field matches %d", c.Paging.TotalCount)
	}
	// The same file again changes nothing.
	again := mustUpload(t, s, tenant, tok, "big again", b.String())
	if again.Created != 0 || again.Updated != 0 || again.Unchanged != n {
		t.Fatalf("second import %+v", again)
	}
}

// TestImportNeverTouchesAnotherTenant imports, as one tenant, rows that name
// another tenant's contacts by id, external id, email and phone: they must
// create contacts of the importing tenant and leave the other's alone.
func TestImportNeverTouchesAnotherTenant(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	a, tokA := s.NewTenant(t)
	b, tokB := s.NewTenant(t)
	mustUpload(t, s, a, tokA, "a", "externalId,firstName,lastName,emails,mobilePhones\n"+
		"K1,Kim,Alpha,kim@example.com,+15554000001\n"+
		"K2,Lee,Alpha,lee@example.com,+15554000002\n"+
		"K3,Max,Alpha,max@example.com,+15554000003\n")
	before := find(t, s, tokA, "?sort=id", nil)
	res := mustUpload(t, s, b, tokB, "b", "id,externalId,firstName,lastName,emails,mobilePhones\n"+
		fmt.Sprintf("%d,,Kim,Beta,,\n", personID(t, s, a, "K1"))+
		",K2,Lee,Beta,,\n"+
		",,Max,Beta,max@example.com,\n"+
		",,Ned,Beta,,+15554000001\n")
	if res.Created != 4 || res.Updated != 0 || res.Unchanged != 0 {
		t.Fatalf("import into b %+v", res)
	}
	after := find(t, s, tokA, "?sort=id", nil)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("tenant a changed:\n%+v\n%+v", before, after)
	}
	if got := find(t, s, tokB, "", map[string]any{"email": "max@example.com"}); len(got.Items) != 1 || got.Items[0].Name.Last != "Beta" {
		t.Fatalf("b sees %+v", got.Items)
	}
}

// TestCreateFromFileNULIsAProblemOfItsLineAndColumn: a NUL character in a
// cell skips its row, naming the line and column, whether it is near the
// start of the file or far into it; one in the header means the file is not
// CSV text, and the 400 names the header's column.
func TestCreateFromFileNULIsAProblemOfItsLineAndColumn(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	row := func(i int) string { return fmt.Sprintf("N%d,First,Last%d\n", i, i) }
	var file strings.Builder
	file.WriteString("externalId,firstName,lastName\n") // line 1
	for i := 2; i <= 3100; i++ {
		switch i {
		case 3, 3002:
			fmt.Fprintf(&file, "N%d,First,La\x00st\n", i)
		default:
			file.WriteString(row(i))
		}
	}
	res := mustUpload(t, s, tenant, tok, "nul", file.String())
	if res.Created != 3097 || res.Skipped != 2 || len(res.Errors) != 2 {
		t.Fatalf("counts %+v, errors %+v", res, res.Errors)
	}
	for i, line := range []int{3, 3002} {
		if e := res.Errors[i]; e.Line != line || e.Column != "lastName" || !strings.Contains(e.Message, "NUL") || strings.Contains(e.Value, "\x00") {
			t.Errorf("error %d = %+v, want line %d, column lastName", i, e, line)
		}
	}
	r := upload(t, s, tenant, tok, "nul header", "externalId,firstName,last\x00Name\nN1,A,B\n")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "line 1: column 3 of the header holds a NUL character") {
		t.Fatalf("NUL in the header: %d %s", r.Status, r.Body)
	}
}

// TestCreateFromFileKeepsAContactWithinItsLimits: a row that would leave
// its contact holding more email addresses or phone numbers than a person
// may is a row problem, and nothing of it is written; the other rows are.
func TestCreateFromFileKeepsAContactWithinItsLimits(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	list := func(format string, from, n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(format, from+i)
		}
		return strings.Join(items, ";")
	}
	mustUpload(t, s, tenant, tok, "first", "externalId,firstName,lastName,emails,mobilePhones\n"+
		"X1,Ann,One,"+list("ann%d@example.com", 0, 15)+",\n"+
		"X2,Bob,Two,,"+list("+1555100%04d", 0, 15)+"\n")
	res := mustUpload(t, s, tenant, tok, "second", "externalId,firstName,lastName,emails,mobilePhones\n"+
		"X1,Anne,,"+list("ann%d@example.com", 10, storage.MaxEmailsPerPerson-10+1)+",\n"+ // 5 held and 6 new: one too many
		"X2,Bobby,,,"+list("+1555100%04d", 10, storage.MaxPhonesPerPerson-10+1)+"\n"+
		"X3,Cid,Three,cid@example.com,\n")
	if res.Created != 1 || res.Updated != 0 || res.Skipped != 2 || res.ErrorCount != 2 || len(res.Errors) != 2 ||
		res.Errors[0].Line != 2 || res.Errors[0].Column != "emails" || !strings.Contains(res.Errors[0].Message, "21 email addresses") ||
		res.Errors[1].Line != 3 || !strings.Contains(res.Errors[1].Message, "21 phone numbers") {
		t.Fatalf("result %+v", res)
	}
	all := find(t, s, tok, "?sort=externalId", nil)
	if len(all.Items) != 3 {
		t.Fatalf("%d contacts", len(all.Items))
	}
	if c := all.Items[0]; c.Name.First != "Ann" || len(c.Emails) != 15 {
		t.Errorf("X1 is %s with %d emails", c.Name.First, len(c.Emails))
	}
	if c := all.Items[1]; c.Name.First != "Bob" || len(c.Phones) != 15 {
		t.Errorf("X2 is %s with %d phones", c.Name.First, len(c.Phones))
	}
	// Within the limit, the same contacts take the rows.
	res = mustUpload(t, s, tenant, tok, "third", "externalId,firstName,lastName,emails,mobilePhones\n"+
		"X1,,,"+list("ann%d@example.com", 10, storage.MaxEmailsPerPerson-10)+",\n"+
		"X2,,,,"+list("+1555100%04d", 10, storage.MaxPhonesPerPerson-10)+"\n")
	if res.Updated != 2 || res.Skipped != 0 {
		t.Fatalf("result %+v", res)
	}
}
