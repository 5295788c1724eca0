package recipients_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	other, otherTok := s.NewTenant(t)
	mustUpload(t, s, tenant, tok, "source", "externalId,firstName,middleName,lastName,language,timeZone,emails,mobilePhones,homePhones,roles,chatUsers,custom.formula,custom.site\n"+
		"F1,=HYPERLINK(\"http://evil\"),,Formula,en,Europe/Berlin,f1@example.com,+15552000001,+15552000011,@admin,slack:U1;teams:abc,=1+1,-3\n"+
		"F2,Plain,Q.,Person,pt-BR,America/Sao_Paulo,f2@example.com;f2b@example.com,,,Floor warden;First aider,,'quoted,+x\n"+
		",Nobody,,Special,en,UTC,,,+15552000003,,,,\n")
	directoryUser(t, s, tenant, "", "", "Staff") // a directory user without external id or first name
	mustUpload(t, s, other, otherTok, "other", "externalId,firstName,lastName\nO1,Other,Tenant\n")
	before := find(t, s, tok, "?sort=id&pageSize=100", nil)
	if before.Paging.TotalCount != 4 {
		t.Fatalf("%d contacts", before.Paging.TotalCount)
	}

	r := s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(r.Header.Get("Content-Disposition"), "contacts.csv") {
		t.Fatalf("export %d %v %s", r.Status, r.Header, r.Body)
	}
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, r.Body)
	}
	wantHeader := []string{"id", "externalId", "firstName", "middleName", "lastName", "language", "timeZone", "emails",
		"mobilePhones", "homePhones", "workPhones", "otherPhones", "faxPhones", "roles", "chatUsers", "custom.formula", "custom.site"}
	if !reflect.DeepEqual(rows[0], wantHeader) {
		t.Fatalf("header %v", rows[0])
	}
	if len(rows) != 5 || !bytes.Contains(r.Body, []byte("\r\n")) {
		t.Fatalf("%d rows (other tenants leak?):\n%s", len(rows), r.Body)
	}
	f1 := rows[1]
	for col, want := range map[int]string{2: `'=HYPERLINK("http://evil")`, 8: "'+15552000001", 9: "'+15552000011", 13: "'@admin", 14: "slack:U1;teams:abc", 15: "'=1+1", 16: "'-3"} {
		if f1[col] != want {
			t.Errorf("column %s = %q, want %q", rows[0][col], f1[col], want)
		}
	}
	for _, row := range rows[1:] {
		for _, cell := range row {
			if cell != "" && strings.ContainsAny(cell[:1], "=+-@\t\r") {
				t.Errorf("formula left in export: %q", cell)
			}
		}
	}
	if rows[2][15] != "'quoted" || rows[2][16] != "'+x" {
		t.Errorf("quoted values: %q %q", rows[2][15], rows[2][16])
	}

	// Importing the export creates nothing and changes nothing.
	res := mustUpload(t, s, tenant, tok, "round trip", string(r.Body))
	if res.Created != 0 || res.Updated != 0 || res.Unchanged != 4 || res.Skipped != 0 || res.DistributionList.MemberCount != 4 {
		t.Fatalf("re-import %+v", res)
	}
	after := find(t, s, tok, "?sort=id&pageSize=100", nil)
	for i := range before.Items {
		b, a := before.Items[i], after.Items[i]
		b.DistributionLists, a.DistributionLists = nil, nil
		b.DistributionListCount, a.DistributionListCount = 0, 0
		if !reflect.DeepEqual(b, a) {
			t.Errorf("contact changed by the round trip:\nbefore %+v\nafter  %+v", b, a)
		}
	}
	if c := after.Items[0]; c.CustomFields["formula"] != "=1+1" || c.Phones[0].Number != "+15552000001" || c.Phones[1].Type != model.PhoneType("Home") ||
		c.Roles[0].Name != "@admin" || len(c.ChatUsers) != 2 || c.TimeZone != "Europe/Berlin" {
		t.Errorf("values after the round trip %+v", c)
	}

	// With bom=true the file starts with a byte order mark, and still imports.
	r = s.Do(t, http.MethodGet, "/v2/contacts/export?bom=true", tok, nil)
	if !bytes.HasPrefix(r.Body, []byte("\xEF\xBB\xBFid,")) {
		t.Fatalf("no BOM: %q", r.Body[:10])
	}
	if res := mustUpload(t, s, tenant, tok, "with bom", string(r.Body)); res.Unchanged != 4 || res.Created != 0 {
		t.Fatalf("BOM re-import %+v", res)
	}
	if r := s.Do(t, http.MethodGet, "/v2/contacts/export", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("export without token: %d", r.Status)
	}
}

func TestExportOfAnEmptyTenantIsAHeader(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	r := s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil)
	if r.Status != http.StatusOK || !strings.HasPrefix(string(r.Body), "id,externalId,") || strings.Count(string(r.Body), "\r\n") != 1 {
		t.Fatalf("%d %q", r.Status, r.Body)
	}
}

func TestExportStreamsManyBatches(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	var file strings.Builder
	file.WriteString("externalId,firstName,lastName\n")
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&file, "G%d,First%d,Last%d\n", i, i, i)
	}
	if res := mustUpload(t, s, tenant, tok, "many", file.String()); res.Created != 2500 {
		t.Fatalf("import %+v", res)
	}
	r := s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil)
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil || len(rows) != 2501 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	seen := map[string]bool{}
	for _, row := range rows[1:] {
		seen[row[1]] = true
	}
	if len(seen) != 2500 {
		t.Fatalf("%d distinct contacts", len(seen))
	}
}

// TestExportRoundTripKeepsPhoneTypesAndFlags: a contact's phone numbers
// keep their type and flags through export and import into another
// tenant: a fax number stays a fax number (the fax channel finds it, voice
// does not dial it), a home number that takes texts keeps taking them, a
// mobile number without texts stays without.
func TestExportRoundTripKeepsPhoneTypesAndFlags(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	id := directoryUser(t, s, tenant, "P1", "Phoebe", "Phones")
	base := fmt.Sprintf("/%s/directory/staff/users/%d/contact/phones", tenant, id)
	for _, p := range []map[string]any{
		{"number": "+12025550101", "type": "Mobile", "canText": false},
		{"number": "+12025550102", "type": "Home"},
		{"number": "+12025550103", "type": "Work", "canCall": false},
		{"number": "+12025550104", "type": "Other", "canText": false},
		{"number": "+12025550105", "type": "Fax"},
	} {
		s.Create(t, base, tok, p)
	}
	phones := func(token string) []string {
		t.Helper()
		var out []string
		for _, c := range find(t, s, token, "?sort=id&pageSize=100", nil).Items {
			for _, p := range c.Phones {
				out = append(out, fmt.Sprintf("%s %s text=%v call=%v", p.Number, p.Type, p.CanText, p.CanCall))
			}
		}
		return out
	}
	want := phones(tok)
	if len(want) != 5 {
		t.Fatalf("phones %v", want)
	}
	r := s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("export %d %s", r.Status, r.Body)
	}
	other, otherTok := s.NewTenant(t)
	mustUpload(t, s, other, otherTok, "copy", string(r.Body))
	if got := phones(otherTok); !reflect.DeepEqual(got, want) {
		t.Fatalf("phones after export and import:\n%v\nwant\n%v\nfile:\n%s", got, want, r.Body)
	}
	// The copy exports the same file but for the contact ids.
	withoutIDs := func(b []byte) []string {
		var out []string
		for _, row := range strings.Split(string(b), "\r\n") {
			_, rest, _ := strings.Cut(row, ",")
			out = append(out, rest)
		}
		return out
	}
	again := s.Do(t, http.MethodGet, "/v2/contacts/export", otherTok, nil)
	if a, b := withoutIDs(r.Body), withoutIDs(again.Body); !reflect.DeepEqual(a, b) {
		t.Fatalf("the export of the copy differs:\n%s\n%s", r.Body, again.Body)
	}

	// A file written before faxPhones and flags existed imports as it did.
	old, oldTok := s.NewTenant(t)
	mustUpload(t, s, old, oldTok, "old", "firstName,lastName,mobilePhones,homePhones,otherPhones\nOld,File,+12025550111,+12025550112,+12025550113\n")
	if got, want := phones(oldTok), []string{"+12025550111 Mobile text=true call=true", "+12025550112 Home text=false call=true",
		"+12025550113 Other text=false call=true"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("an old file's phones: %v", got)
	}
	// A fax number that takes texts or calls, or brackets that are not
	// flags, are problems of their row.
	res := mustUpload(t, s, old, oldTok, "bad flags", "firstName,lastName,faxPhones,mobilePhones\nBad,Fax,+12025550121 [call],\nBad,Flags,,+12025550122 [sms]\n")
	if res.ErrorCount != 2 || res.Errors[0].Column != "faxPhones" || res.Errors[1].Column != "mobilePhones" {
		t.Fatalf("bad flags: %+v", res)
	}
}

// TestExportWritesEveryCustomKey: the export has a column for every
// custom-field key the tenant's contacts hold (250 here, more than one
// contact may hold), so its file imports again without losing a value; a
// tenant whose contacts hold more keys than a file has columns for, as
// contacts written before imports held them to that may, is refused with
// a 409 rather than given a file that leaves some out.
func TestExportWritesEveryCustomKey(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	file := func(ext string, from, n int) string {
		var head, row strings.Builder
		head.WriteString("externalId,firstName,lastName")
		fmt.Fprintf(&row, "%s,Key,Holder", ext)
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&head, ",custom.k%04d", i)
			fmt.Fprintf(&row, ",v%d", i)
		}
		return head.String() + "\n" + row.String() + "\n"
	}
	mustUpload(t, s, tenant, tok, "first", file("E1", 0, contactcsv.MaxCustomFields))
	mustUpload(t, s, tenant, tok, "second", file("E2", 150, 100)) // 50 keys E1 has, 50 new
	r := s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("export %d %s", r.Status, r.Body)
	}
	rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if n := len(rows[0]) - len(contactcsv.Columns); n != 250 || rows[0][len(rows[0])-1] != "custom.k0249" {
		t.Fatalf("%d custom-field columns, the last %s", n, rows[0][len(rows[0])-1])
	}
	other, otherTok := s.NewTenant(t)
	if res := mustUpload(t, s, other, otherTok, "copy", string(r.Body)); res.Created != 2 || res.Skipped != 0 {
		t.Fatalf("import of the export %+v", res)
	}
	for ext, want := range map[string]int{"E1": 200, "E2": 100} {
		c := find(t, s, otherTok, "", map[string]any{"externalId": ext})
		if len(c.Items) != 1 || len(c.Items[0].CustomFields) != want || c.Items[0].CustomFields["k0199"] != "v199" {
			t.Fatalf("%s in the copy: %+v", ext, c.Items)
		}
	}

	// Contacts written before the tenant's limit: more keys than columns.
	legacy := map[string]string{}
	for i := range contactcsv.MaxCustomColumns - 250 + 1 {
		legacy[fmt.Sprintf("old%04d", i)] = "x"
	}
	if err := storagetest.AddCustomFields(context.Background(), s.DB, tenant, personID(t, s, tenant, "E2"), legacy); err != nil {
		t.Fatal(err)
	}
	r = s.Do(t, http.MethodGet, "/v2/contacts/export", tok, nil)
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "more than 1000 different custom fields") {
		t.Fatalf("export of 1001 keys: %d %.300s", r.Status, r.Body)
	}
}
