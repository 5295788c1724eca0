package recipients_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// Spellings of one name: é as one character (NFC) and as e with a
// combining acute accent (NFD).
const (
	cafeNFC = "Caf\u00e9"
	cafeNFD = "Cafe\u0301"
)

// TestListNamesAreOneInEverySpelling: a distribution list's name is taken
// in NFC, so a second list of the other spelling is a 409 and the listing
// finds it by either; a name with the joiners scripts and emoji need is
// taken as sent; one with a bidirectional control or an invisible
// character is a 400 naming body.name, and nothing is imported.
func TestListNamesAreOneInEverySpelling(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	const file = "firstName,lastName,emails\r\nAda,Lovelace,ada@example.com\r\n"
	if l := mustUpload(t, s, tenant, tok, cafeNFD, file).DistributionList; l.Name != cafeNFC {
		t.Fatalf("a decomposed name is stored as %q", l.Name)
	}
	if r := upload(t, s, tenant, tok, cafeNFC, file); r.Status != http.StatusConflict {
		t.Fatalf("the other spelling: %d %s", r.Status, r.Body)
	}
	for _, name := range []string{"\U0001F469\u200d\U0001F4BB on call", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"} {
		if l := mustUpload(t, s, tenant, tok, name, file).DistributionList; l.Name != name {
			t.Errorf("%q stored as %q", name, l.Name)
		}
	}
	for _, name := range []string{"\u202eevil", "a\u2066b\u2069", "St\u200daff", "zero\u200bwidth", "bell\a"} {
		refusedAt(t, upload(t, s, tenant, tok, name, file), "body.name")
	}
	if n := listCount(t, s, tenant); n != 3 {
		t.Fatalf("%d lists", n)
	}
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v4/%s/distributionLists?name=%s", tenant, url.QueryEscape(cafeNFD)), tok, nil)
	var page model.PagedDistributionProfileResponse
	r.JSON(t, &page)
	if len(page.Items) != 1 || page.Items[0].Name != cafeNFC {
		t.Fatalf("lists named %q: %s", cafeNFD, r.Body)
	}
}

// TestTheImportHoldsNamesToTheRuleOfNames: the contacts import stores
// names, external ids and roles in NFC, matches a contact by its external
// id in either spelling, takes the joiners scripts and emoji need, and
// makes a row problem naming the column of a cell with a bidirectional
// control or an invisible character.
func TestTheImportHoldsNamesToTheRuleOfNames(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	user := directoryUser(t, s, tenant, "D-"+cafeNFC, "Dir", "User")
	res := mustUpload(t, s, tenant, tok, "names", "externalId,firstName,lastName,roles\r\n"+
		"E-"+cafeNFD+",Jose\u0301,Nu\u0301n\u0303ez,Floor warden;"+cafeNFD+" crew\r\n"+ // 2
		"E-2,\u202eadA,Lovelace,\r\n"+ // 3
		"E-3,Grace,Hop\u200bper,\r\n"+ // 4
		"E-4\u2066,Alan,Turing,\r\n"+ // 5
		"E-5,Edsger,Dijkstra,ok;\u202dbad\r\n"+ // 6
		"E-6,\U0001F469\u200d\U0001F4BB,\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645,\u0915\u094d\u200d\u0937\r\n"+ // 7
		"D-"+cafeNFD+",Dir,User,Warden\r\n") // 8: the directory user, by the other spelling
	if res.Created != 2 || res.Updated != 1 || res.ErrorCount != 4 {
		t.Fatalf("import %+v", res)
	}
	for i, want := range []model.DistributionListError{
		{Line: 3, Column: "firstName", Value: "\u202eadA"},
		{Line: 4, Column: "lastName", Value: "Hop\u200bper"},
		{Line: 5, Column: "externalId", Value: "E-4\u2066"},
		{Line: 6, Column: "roles", Value: "ok;\u202dbad"},
	} {
		if e := res.Errors[i]; e.Line != want.Line || e.Column != want.Column || e.Value != want.Value || e.Message == "" {
			t.Errorf("problem %d = %+v, want %+v", i, e, want)
		}
	}
	jose := find(t, s, tok, "", map[string]any{"externalId": "E-" + cafeNFD}).Items
	if len(jose) != 1 || jose[0].ExternalID != "E-"+cafeNFC || jose[0].Name.First != "Jos\u00e9" || jose[0].Name.Last != "N\u00fa\u00f1ez" ||
		len(jose[0].Roles) != 2 || jose[0].Roles[1].Name != cafeNFC+" crew" {
		t.Fatalf("contact %+v", jose)
	}
	if byRole := find(t, s, tok, "", map[string]any{"role": cafeNFD + " crew"}).Items; len(byRole) != 1 || byRole[0].ID != jose[0].ID {
		t.Fatalf("by role: %+v", byRole)
	}
	if byName := find(t, s, tok, "", map[string]any{"name": "Jose\u0301"}).Items; len(byName) != 1 || byName[0].ID != jose[0].ID {
		t.Fatalf("by name: %+v", byName)
	}
	joined := find(t, s, tok, "", map[string]any{"externalId": "E-6"}).Items
	if len(joined) != 1 || joined[0].Name.First != "\U0001F469\u200d\U0001F4BB" || joined[0].Name.Last != "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645" ||
		len(joined[0].Roles) != 1 || joined[0].Roles[0].Name != "\u0915\u094d\u200d\u0937" {
		t.Fatalf("joiners: %+v", joined)
	}
	if d := find(t, s, tok, "", map[string]any{"externalId": "D-" + cafeNFC}).Items; len(d) != 1 || d[0].ID != user ||
		!slices.ContainsFunc(d[0].Roles, func(r model.DisplayRole) bool { return r.Name == "Warden" }) {
		t.Fatalf("the directory user matched by the other spelling: %+v", d)
	}
}
