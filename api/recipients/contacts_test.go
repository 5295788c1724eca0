package recipients_test

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/contactcsv"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/contacts"
)

const people = "externalId,firstName,lastName,emails,mobilePhones,workPhones,roles,custom.building,custom.floor\n" +
	"E1,Ada,Lovelace,ada@example.com,+15550000001,,Floor warden,A,1\n" +
	"E2,Adam,Smith,adam@example.com;a.smith@example.org,+15550000002,,,A,2\n" +
	"E3,Grace,Hopper,grace@example.com,,+15550000003,First aider,B,1\n" +
	"E4,Alan,Turing,alan@example.com,+15550000004,,Floor warden,B,2\n" +
	"E5,Edsger,Adams,edsger@example.com,,,,C,1\n"

func TestFindContactsFilters(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	other, otherTok := s.NewTenant(t)
	// E1, E2 and E3 are directory users, so that they can join groups;
	// the import fills in the rest of them.
	e1 := directoryUser(t, s, tenant, "E1", "Ada", "Lovelace")
	e2 := directoryUser(t, s, tenant, "E2", "Adam", "Smith")
	e3 := directoryUser(t, s, tenant, "E3", "Grace", "Hopper")
	listA := mustUpload(t, s, tenant, tok, "everyone", people)
	if listA.Created != 2 || listA.Updated != 3 || listA.Skipped != 0 {
		t.Fatalf("import %+v", listA)
	}
	listB := mustUpload(t, s, tenant, tok, "two", "externalId,firstName,lastName\nE1,,\nE3,,\n")
	if listB.Unchanged != 2 || listB.Created != 0 {
		t.Fatalf("second import %+v", listB)
	}
	// Another tenant with the same people must never show up.
	mustUpload(t, s, other, otherTok, "everyone", people)

	campus := directoryGroup(t, s, tenant, 0, "Campus")
	facilities := directoryGroup(t, s, tenant, campus, "Facilities")
	night := directoryGroup(t, s, tenant, facilities, "Night shift")
	join(t, s, tenant, e1, campus)
	join(t, s, tenant, e2, facilities)
	join(t, s, tenant, e3, night)

	no := false
	cases := []struct {
		name string
		body any
		want []string
	}{
		{"no body", nil, []string{"E5", "E3", "E1", "E2", "E4"}},
		{"empty body", map[string]any{}, []string{"E5", "E3", "E1", "E2", "E4"}},
		{"name prefix of first or last name", map[string]any{"name": "ada"}, []string{"E5", "E1", "E2"}},
		{"name prefix is case-insensitive", map[string]any{"name": "LOVE"}, []string{"E1"}},
		{"first and last name words", map[string]any{"name": "ad sm"}, []string{"E2"}},
		{"name wildcard is literal", map[string]any{"name": "a%"}, nil},
		{"email", map[string]any{"email": "Grace@Example.com"}, []string{"E3"}},
		{"second email", map[string]any{"email": "a.smith@example.org"}, []string{"E2"}},
		{"phone with separators", map[string]any{"phone": "+1 555 000-0004"}, []string{"E4"}},
		{"work phone", map[string]any{"phone": "+15550000003"}, []string{"E3"}},
		{"external id", map[string]any{"externalId": "E4"}, []string{"E4"}},
		{"group with subgroups", map[string]any{"groupId": campus}, []string{"E3", "E1", "E2"}},
		{"group without subgroups", map[string]any{"groupId": campus, "includeSubgroups": no}, []string{"E1"}},
		{"middle group", map[string]any{"groupId": facilities}, []string{"E3", "E2"}},
		{"unknown group", map[string]any{"groupId": 999999999}, nil},
		{"distribution list", map[string]any{"distributionListId": listB.DistributionList.ID}, []string{"E3", "E1"}},
		{"custom field", map[string]any{"customFields": map[string]string{"building": "B"}}, []string{"E3", "E4"}},
		{"two custom fields", map[string]any{"customFields": map[string]string{"building": "A", "floor": "2"}}, []string{"E2"}},
		{"role", map[string]any{"role": "Floor warden"}, []string{"E1", "E4"}},
		{"filters combine", map[string]any{"role": "Floor warden", "customFields": map[string]string{"building": "A"}}, []string{"E1"}},
		{"nothing matches", map[string]any{"email": "nobody@example.com"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != nil {
				body = c.body
			}
			res := find(t, s, tok, "", body)
			got := externalIDs(res)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			if res.Paging.TotalCount != int64(len(c.want)) {
				t.Fatalf("totalCount %d, want %d", res.Paging.TotalCount, len(c.want))
			}
		})
	}

	// The contact carries what reaches it.
	res := find(t, s, tok, "", map[string]any{"externalId": "E3"})
	g := res.Items[0]
	if g.Name.First != "Grace" || len(g.Emails) != 1 || g.Emails[0].VerificationStatus != "Unverified" ||
		len(g.Phones) != 1 || g.Phones[0].Type != "Work" || g.Phones[0].CanText ||
		len(g.Groups) != 1 || g.Groups[0].Path != "Campus / Facilities / Night shift" || g.Groups[0].Depth != 2 ||
		len(g.Roles) != 1 || g.Roles[0].Name != "First aider" || g.CustomFields["building"] != "B" ||
		len(g.DistributionLists) != 2 || g.Language != "en" || g.TimeZone != "UTC" {
		t.Fatalf("contact %+v", g)
	}

	// Bad input is a 400 naming the field.
	for _, body := range []map[string]any{
		{"phone": "555-1234"}, {"groupId": 0}, {"name": strings.Repeat("n", 201)}, {"shoeSize": 9},
	} {
		r := s.Do(t, http.MethodPost, "/v2/contacts/find", tok, body)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "body") {
			t.Errorf("%v: %d %s", body, r.Status, r.Body)
		}
	}
	// A token without the tamarack scope may not search.
	if r := s.Do(t, http.MethodPost, "/v2/contacts/find", s.Token(t, tenant, auth.ScopeElm), nil); r.Status != http.StatusForbidden {
		t.Fatalf("without scope: %d", r.Status)
	}
}

func TestFindContactsPagingAndSorting(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	var csv strings.Builder
	csv.WriteString("externalId,firstName,lastName\n")
	for i := range 23 {
		// Three people share each last name, so the sort needs its tie-breaks.
		fmt.Fprintf(&csv, "X%02d,F%02d,L%d\n", i, 22-i, i/3)
	}
	mustUpload(t, s, tenant, tok, "all", csv.String())

	var seen []string
	for page := 1; ; page++ {
		res := find(t, s, tok, fmt.Sprintf("?page=%d&pageSize=5&sort=-lastName,firstName", page), nil)
		if res.Paging.TotalCount != 23 || res.Paging.TotalPages != 5 || res.Paging.Page != page || res.Paging.PageSize != 5 {
			t.Fatalf("paging %+v", res.Paging)
		}
		if len(res.Items) == 0 {
			break
		}
		for _, c := range res.Items {
			seen = append(seen, c.Name.Last+"/"+c.Name.First)
		}
	}
	if len(seen) != 23 {
		t.Fatalf("saw %d contacts over the pages: %v", len(seen), seen)
	}
	if !slices.IsSortedFunc(seen, func(a, b string) int {
		la, fa, _ := strings.Cut(a, "/")
		lb, fb, _ := strings.Cut(b, "/")
		if c := strings.Compare(lb, la); c != 0 {
			return c
		}
		return strings.Compare(fa, fb)
	}) {
		t.Fatalf("not sorted by -lastName, firstName: %v", seen)
	}
	if seen[0] != "L7/F00" || seen[1] != "L7/F01" {
		t.Fatalf("first %v", seen[:2])
	}

	byID := externalIDs(find(t, s, tok, "?pageSize=3&sort=externalId", nil))
	if !reflect.DeepEqual(byID, []string{"X00", "X01", "X02"}) {
		t.Fatalf("sort by externalId: %v", byID)
	}
	desc := externalIDs(find(t, s, tok, "?pageSize=2&page=2&sort=-EXTERNALID", nil))
	if !reflect.DeepEqual(desc, []string{"X20", "X19"}) {
		t.Fatalf("second page of -externalId: %v", desc)
	}
	if res := find(t, s, tok, "?page=9", nil); len(res.Items) != 0 || res.Paging.TotalCount != 23 {
		t.Fatalf("page past the end %+v", res)
	}
	for _, q := range []string{"?sort=shoeSize", "?pageSize=501", "?page=0"} {
		if r := s.Do(t, http.MethodPost, "/v2/contacts/find"+q, tok, nil); r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
}

// TestDirectoryUsersAreContacts checks that people the directory made are
// found, exported and matched like any contact.
func TestDirectoryUsersAreContacts(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	directoryUser(t, s, tenant, "U1", "Dora", "Directory")
	res := find(t, s, tok, "", map[string]any{"name": "dora"})
	if len(res.Items) != 1 || res.Items[0].DirectoryID != "staff" {
		t.Fatalf("directory user %+v", res.Items)
	}
	up := mustUpload(t, s, tenant, tok, "staff", "externalId,firstName,lastName,emails\nU1,Dora,Directory,dora@example.com\n")
	if up.Created != 0 || up.Updated != 1 {
		t.Fatalf("import over a directory user %+v", up)
	}
	if n := contactCount(t, s, tenant); n != 1 {
		t.Fatalf("%d people; the directory user was copied", n)
	}
}

var _ = model.Contact{}

// TestAContactListsItsFirstGroupsAndListsAndCountsThemAll: a contact in
// more groups and on more lists than a page lists per contact carries the
// oldest groups and the newest lists, each in display order, with exact
// counts of all of them; the contact beside it on the page carries its own.
func TestAContactListsItsFirstGroupsAndListsAndCountsThemAll(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	ada := directoryUser(t, s, tenant, "A1", "Ada", "Lovelace")
	alan := directoryUser(t, s, tenant, "A2", "Alan", "Turing")
	// Created in the order of their names, so the oldest come first by name.
	for i := range contacts.MaxPageGroups + 2 {
		g := directoryGroup(t, s, tenant, 0, fmt.Sprintf("g%03d", i))
		join(t, s, tenant, ada, g)
		if i == 0 {
			join(t, s, tenant, alan, g)
		}
	}
	for i := range contacts.MaxPageLists + 1 {
		mustUpload(t, s, tenant, tok, fmt.Sprintf("list %03d", i), "externalId,firstName,lastName\nA1,,\n")
	}
	res := find(t, s, tok, "?sort=externalId", nil)
	if len(res.Items) != 2 {
		t.Fatalf("%d contacts", len(res.Items))
	}
	a, b := res.Items[0], res.Items[1]
	// The groups come by path, whose ids sort as text: the oldest are
	// g000 to g049 in some order.
	names := make([]string, len(a.Groups))
	for i, g := range a.Groups {
		names[i] = g.Name
	}
	slices.Sort(names)
	if len(a.Groups) != contacts.MaxPageGroups || a.GroupCount != contacts.MaxPageGroups+2 || !a.GroupCountExact ||
		names[0] != "g000" || names[len(names)-1] != fmt.Sprintf("g%03d", contacts.MaxPageGroups-1) {
		t.Errorf("Ada lists %d groups (%v) of %d (exact %v)", len(a.Groups), names, a.GroupCount, a.GroupCountExact)
	}
	last := a.DistributionLists[len(a.DistributionLists)-1]
	if len(a.DistributionLists) != contacts.MaxPageLists || a.DistributionListCount != contacts.MaxPageLists+1 || !a.DistributionListCountExact ||
		a.DistributionLists[0].Name != "list 001" || last.Name != fmt.Sprintf("list %03d", contacts.MaxPageLists) {
		t.Errorf("Ada lists %d lists (%s to %s) of %d (exact %v)", len(a.DistributionLists), a.DistributionLists[0].Name, last.Name,
			a.DistributionListCount, a.DistributionListCountExact)
	}
	if len(b.Groups) != 1 || b.GroupCount != 1 || len(b.DistributionLists) != 0 || b.DistributionListCount != 0 ||
		!b.GroupCountExact || !b.DistributionListCountExact {
		t.Errorf("Alan lists %d groups of %d, %d lists of %d", len(b.Groups), b.GroupCount, len(b.DistributionLists), b.DistributionListCount)
	}
}

// TestFindContactsPageBoundsItsCustomFields: a page carries the custom
// fields of its contacts, in order, up to contacts.MaxPageCustomBytes; the
// contacts after them say their fields were left out, and a page of one
// reads each of them.
func TestFindContactsPageBoundsItsCustomFields(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	const contactsN = 6
	wide := strings.Repeat("\U0001D538", contactcsv.MaxCustomValue) // 𝔸, four bytes
	var file strings.Builder
	file.WriteString("externalId,firstName,lastName")
	for k := range contactcsv.MaxCustomFields {
		fmt.Fprintf(&file, ",custom.k%03d", k)
	}
	for i := range contactsN {
		fmt.Fprintf(&file, "\nW%d,Wide,Fields%d", i, i)
		file.WriteString(strings.Repeat(","+wide, contactcsv.MaxCustomFields))
	}
	if res := mustUpload(t, s, tenant, tok, "wide", file.String()+"\n"); res.Created != contactsN {
		t.Fatalf("import %+v", res)
	}
	r := s.Do(t, http.MethodPost, "/v2/contacts/find?sort=externalId&pageSize=25", tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("find %d %.300s", r.Status, r.Body)
	}
	if len(r.Body) > contacts.MaxPageCustomBytes+64<<10 {
		t.Errorf("a page of %d bytes", len(r.Body))
	}
	var page model.PagedContactResponse
	r.JSON(t, &page)
	if len(page.Items) != contactsN {
		t.Fatalf("%d contacts", len(page.Items))
	}
	carried := 0
	for i, c := range page.Items {
		switch {
		case !c.CustomFieldsOmitted && len(c.CustomFields) == contactcsv.MaxCustomFields && c.CustomFields["k007"] == wide:
			if carried != i {
				t.Fatalf("contact %d carries its fields after one that did not", i)
			}
			carried++
		case c.CustomFieldsOmitted && len(c.CustomFields) == 0:
			one := find(t, s, tok, fmt.Sprintf("?sort=externalId&pageSize=1&page=%d", i+1), nil)
			if got := one.Items[0]; got.ID != c.ID || got.CustomFieldsOmitted || len(got.CustomFields) != contactcsv.MaxCustomFields {
				t.Errorf("contact %d alone: omitted %v, %d fields", i, got.CustomFieldsOmitted, len(got.CustomFields))
			}
		default:
			t.Fatalf("contact %d: omitted %v, %d fields", i, c.CustomFieldsOmitted, len(c.CustomFields))
		}
	}
	if carried == 0 || carried == contactsN {
		t.Fatalf("%d of %d contacts carry their fields", carried, contactsN)
	}
}
