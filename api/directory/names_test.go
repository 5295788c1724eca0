package directory_test

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/tocsin/tocsin/storage/storagetest"
)

// Spellings of one name: é as one character (NFC) and as e with a
// combining acute accent (NFD).
const (
	cafeNFC = "Caf\u00e9"
	cafeNFD = "Cafe\u0301"
)

// Names that the rule of names takes: joiners and selectors where scripts
// and emoji need them.
var takenNames = []string{
	"\U0001F469\u200d\U0001F4BB on call",               // 👩‍💻, an emoji ZWJ sequence
	"\U0001F3F3\ufe0f\u200d\U0001F308 Pride",           // 🏳️‍🌈
	"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", // Persian with a ZWNJ
	"\u0915\u094d\u200d\u0937",                         // Devanagari: a virama, then a ZWJ
	"\u2764\ufe0f team",                                // ❤️
}

// Names that hide what they say: each is a 400 naming the field.
var refusedNames = []string{
	"\u202eevil.exe",   // right-to-left override
	"a\u202ab",         // left-to-right embedding
	"a\u2066b\u2069",   // an isolate
	"a\u200fb",         // right-to-left mark
	"St\u200daff",      // a joiner between Latin letters only hides a difference
	"St\u200caff",      // so does a non-joiner
	"zero\u200bwidth",  // a zero-width space
	"bell\a",           // a C0 control
	"next\u0085line",   // a C1 control
	"soft\u00adhyphen", // invisible
}

// TestGroupNamesAreOneInEverySpelling: a group name is taken in NFC, so
// its decomposed spelling is a sibling of the same name (409) and finds
// it; names with the joiners scripts and emoji need are taken as sent;
// bidirectional controls and invisible characters are a 400 naming
// body.name.
func TestGroupNamesAreOneInEverySpelling(t *testing.T) {
	t.Parallel()
	e := start(t)
	var g groupSummary
	want(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": cafeNFC}), 201).JSON(t, &g)
	if g.Name != cafeNFC {
		t.Fatalf("created %q", g.Name)
	}
	wantProblem(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": cafeNFD}), 409, "")
	var nfd groupSummary
	want(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": cafeNFD, "parentId": strconv.FormatInt(g.ID, 10)}), 201).JSON(t, &nfd)
	if nfd.Name != cafeNFC {
		t.Fatalf("a decomposed name is stored as %q", nfd.Name)
	}
	var found struct{ Items []groupSummary }
	want(t, e.do(t, "POST", e.base()+"/groups/find", map[string]any{"name": cafeNFD, "rootsOnly": true}), 200).JSON(t, &found)
	if len(found.Items) != 1 || found.Items[0].ID != g.ID {
		t.Fatalf("find by the decomposed spelling: %+v", found.Items)
	}
	for _, name := range takenNames {
		var made groupSummary
		want(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": name}), 201).JSON(t, &made)
		if made.Name != name {
			t.Errorf("%q stored as %q", name, made.Name)
		}
	}
	for _, name := range refusedNames {
		wantProblem(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": name}), 400, "body.name")
	}
}

// TestDirectoryIdsExternalIdsAndNamesFollowTheRuleOfNames: a directory id
// and an external id are one in every spelling (a user created in one
// spelling is read in the other, an external id taken in one is a 409 in
// the other); people's and places' names are stored in NFC; and each
// refuses what hides what a name says, naming the field.
func TestDirectoryIdsExternalIdsAndNamesFollowTheRuleOfNames(t *testing.T) {
	t.Parallel()
	e := start(t)
	users := func(dir string) string { return "/" + e.tenant + "/directory/" + url.PathEscape(dir) + "/users" }
	name := map[string]any{"first": "Jose\u0301", "middle": "Mar\u0131\u0301a", "last": "Nu\u0301n\u0303ez"}
	var p profile
	want(t, e.do(t, "POST", users(cafeNFD), map[string]any{"name": name, "externalId": "E-" + cafeNFD}), 201).JSON(t, &p)
	if p.DirectoryID != cafeNFC || p.ExternalID != "E-"+cafeNFC || p.Name.First != "Jos\u00e9" || p.Name.Last != "N\u00fa\u00f1ez" {
		t.Fatalf("created %+v", p)
	}
	var read profile
	want(t, e.do(t, "GET", users(cafeNFC)+"/"+p.ID, nil), 200).JSON(t, &read)
	if read.ID != p.ID {
		t.Fatalf("read %+v", read)
	}
	wantProblem(t, e.do(t, "POST", users(cafeNFC), map[string]any{"name": name, "externalId": "E-" + cafeNFC}), 409, "")
	other := want(t, e.do(t, "POST", users(cafeNFC), map[string]any{"name": name}), 201).Map(t)["id"].(string)
	wantProblem(t, e.do(t, "POST", users(cafeNFC)+"/"+other+"/externalId", map[string]any{"externalId": "E-" + cafeNFD}), 409, "")
	var found struct{ Items []profile }
	want(t, e.do(t, "POST", users(cafeNFD)+"/query", map[string]any{"externalId": "E-" + cafeNFD, "name": "Jose\u0301"}), 200).JSON(t, &found)
	if len(found.Items) != 1 || found.Items[0].ID != p.ID {
		t.Fatalf("find by the decomposed spellings: %+v", found.Items)
	}

	for _, bad := range refusedNames {
		wantProblem(t, e.do(t, "POST", users(bad), map[string]any{"name": name}), 400, "path.directoryId")
		wantProblem(t, e.do(t, "POST", users("staff"), map[string]any{"name": name, "externalId": bad}), 400, "body.externalId")
		wantProblem(t, e.do(t, "POST", users(cafeNFC)+"/"+p.ID+"/externalId", map[string]any{"externalId": bad}), 400, "body.externalId")
		for _, field := range []string{"first", "middle", "last"} {
			n := map[string]any{"first": "Ada", "last": "Lovelace", field: bad}
			wantProblem(t, e.do(t, "POST", users("staff"), map[string]any{"name": n}), 400, "body.name."+field)
			wantProblem(t, e.do(t, "PUT", users(cafeNFC)+"/"+p.ID, map[string]any{"name": n, "preferredLanguage": "en", "timeZone": "UTC"}), 400, "body.name."+field)
		}
		wantProblem(t, e.do(t, "POST", users(cafeNFC)+"/"+p.ID+"/notifications/locations", map[string]any{"name": bad,
			"geoLocation": map[string]any{"latitude": 1, "longitude": 2}}), 400, "body.name")
	}
	for _, good := range takenNames {
		var u profile
		want(t, e.do(t, "POST", users(good), map[string]any{"name": map[string]any{"first": good, "last": good}, "externalId": good}), 201).JSON(t, &u)
		if u.DirectoryID != good || u.ExternalID != good || u.Name.First != good || u.Name.Last != good {
			t.Errorf("%q stored as %+v", good, u)
		}
	}
}

// TestANameStoredBeforeTheRuleIsKeptWhenPutBack: a name holding a
// character the rule refuses, stored before it, is read as stored and
// kept by a PUT that sends it back; another such name is a 400.
func TestANameStoredBeforeTheRuleIsKeptWhenPutBack(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")
	n, _ := strconv.ParseInt(id, 10, 64)
	if err := storagetest.StorePersonName(context.Background(), e.s.DB, e.tenant, n, "\u202eadA", "", "Love\u200blace"); err != nil {
		t.Fatal(err)
	}
	var p profile
	want(t, e.do(t, "GET", e.user(id), nil), 200).JSON(t, &p)
	if p.Name.First != "\u202eadA" || p.Name.Last != "Love\u200blace" {
		t.Fatalf("read %+v", p.Name)
	}
	body := map[string]any{"name": map[string]any{"first": p.Name.First, "last": p.Name.Last}, "preferredLanguage": "fr", "timeZone": p.TimeZone}
	want(t, e.do(t, "PUT", e.user(id), body), 204)
	want(t, e.do(t, "GET", e.user(id), nil), 200).JSON(t, &p)
	if p.Name.First != "\u202eadA" || p.Name.Last != "Love\u200blace" || p.PreferredLanguage != "fr" {
		t.Fatalf("after put back %+v", p)
	}
	body["name"] = map[string]any{"first": "\u202eadA", "last": "Love\u200dlace"}
	wantProblem(t, e.do(t, "PUT", e.user(id), body), 400, "body.name.last")
}
