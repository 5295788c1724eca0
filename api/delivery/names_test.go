package delivery_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestEtnAddressPointListNamesAreOneInEverySpelling: an address-point
// list's name is taken in NFC, so importing under the other spelling
// replaces the same list, an alert naming it in either spelling finds it,
// and either spelling deletes it; a name with a bidirectional control or
// an invisible character is a 400 naming path.listName and changes
// nothing.
func TestEtnAddressPointListNamesAreOneInEverySpelling(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	const nfc, nfd = "Caf\u00e9 wells", "Cafe\u0301 wells"
	put := func(name, csv string) stacktest.Response {
		return s.Do(t, http.MethodPut, "/v2/settings/etn/addressPointLists/"+url.PathEscape(name), tok, strings.NewReader(csv), "Content-Type", "text/csv")
	}
	r := put(nfd, "phone,latitude,longitude\n+15550000001,45.0,-122.0\n")
	var res model.EtnAddressPointImportResult
	r.JSON(t, &res)
	if r.Status != 200 || res.ListName != nfc {
		t.Fatalf("import under the decomposed name: %d %s", r.Status, r.Body)
	}
	if r := put(nfc, "phone,latitude,longitude\n+15550000001,45.0,-122.0\n+15550000002,45.1,-122.1\n"); r.Status != 200 {
		t.Fatalf("import under the composed name: %d %s", r.Status, r.Body)
	}
	wantOneList(t, s, tok, 2)
	for _, bad := range []string{"\u202eevil", "a\u2066b\u2069", "St\u200daff", "zero\u200bwidth"} {
		r := put(bad, "phone,latitude,longitude\n+15550000003,45.0,-122.0\n")
		var p rest.ProblemDetails
		r.JSON(t, &p)
		if r.Status != 400 || len(p.Errors) != 1 || p.Errors[0].Location != "path.listName" {
			t.Fatalf("%q: %d %s", bad, r.Status, r.Body)
		}
	}
	wantOneList(t, s, tok, 2)
	preview := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Boil water", "body": "Boil water before drinking."},
		"channels":   map[string]any{"etn": map[string]any{"enabled": true, "addressPointLists": []string{nfd}}},
		"recipients": map[string]any{"areas": []map[string]any{{"center": map[string]any{"lat": 45, "lng": -122}, "radiusMeters": 1000}}},
	}}
	if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, preview); r.Status != 200 {
		t.Fatalf("an alert naming the list in the other spelling: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, "/v2/settings/etn/addressPointLists/"+url.PathEscape(nfd), tok, nil); r.Status != 204 {
		t.Fatalf("delete by the other spelling: %d %s", r.Status, r.Body)
	}
	var lists model.EtnAddressPointListsResponse
	s.Do(t, http.MethodGet, "/v2/settings/etn/addressPointLists", tok, nil).JSON(t, &lists)
	if len(lists.Items) != 0 {
		t.Fatalf("lists after the delete: %+v", lists.Items)
	}
}
