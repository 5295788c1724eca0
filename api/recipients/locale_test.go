package recipients_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// userPath is the directory address of a user of the staff directory.
func userPath(tenant string, id int64) string {
	return fmt.Sprintf("/%s/directory/staff/users/%d", tenant, id)
}

// readUser reads a user of the staff directory through the directory API.
func readUser(t *testing.T, s *stacktest.Stack, tenant string, id int64) model.UserProfile {
	t.Helper()
	r := s.Do(t, http.MethodGet, userPath(tenant, id), s.Token(t, tenant), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("read user %d: %d %s", id, r.Status, r.Body)
	}
	var u model.UserProfile
	r.JSON(t, &u)
	return u
}

// putBack writes the user's base information back as read.
func putBack(t *testing.T, s *stacktest.Stack, tenant string, u model.UserProfile) stacktest.Response {
	t.Helper()
	body := map[string]any{"name": u.Name, "preferredLanguage": u.PreferredLanguage, "timeZone": u.TimeZone}
	return s.Do(t, http.MethodPut, userPath(tenant, mustID(t, u.ID)), s.Token(t, tenant), body)
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscan(s, &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// refusedAt fails unless r is a 400 problem with a failure at location.
func refusedAt(t *testing.T, r stacktest.Response, location string) {
	t.Helper()
	if r.Status != http.StatusBadRequest || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("status %d, want a 400 problem at %s: %s", r.Status, location, r.Body)
	}
	var p rest.ProblemDetails
	r.JSON(t, &p)
	for _, f := range p.Errors {
		if f.Location == location {
			return
		}
	}
	t.Fatalf("no failure at %s: %s", location, r.Body)
}

// TestAnImportedUserCanBeReadAndPutBackUnchanged: a directory user whose
// language and time zone a contacts import wrote, in spellings other than
// the canonical ones and with a link of the time zone database, is read
// and written back through the directory API unchanged.
func TestAnImportedUserCanBeReadAndPutBackUnchanged(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	ada := directoryUser(t, s, tenant, "LOC-1", "Ada", "Lovelace")
	grace := directoryUser(t, s, tenant, "LOC-2", "Grace", "Hopper")
	res := mustUpload(t, s, tenant, tok, "locales", "externalId,firstName,lastName,language,timeZone\r\n"+
		"LOC-1,Ada,Lovelace,pt-br,US/Eastern\r\n"+
		"LOC-2,Grace,Hopper,en_GB,asia/calcutta\r\n")
	if res.Updated != 2 || res.ErrorCount != 0 {
		t.Errorf("import %+v", res)
	}
	for id, want := range map[int64][2]string{ada: {"pt-BR", "US/Eastern"}, grace: {"en-GB", "Asia/Calcutta"}} {
		u := readUser(t, s, tenant, id)
		if r := putBack(t, s, tenant, u); r.Status != http.StatusNoContent {
			t.Fatalf("user %d read and put back: %d %s", id, r.Status, r.Body)
		}
		again := readUser(t, s, tenant, id)
		if again.PreferredLanguage != u.PreferredLanguage || again.TimeZone != u.TimeZone || again.Name != u.Name {
			t.Fatalf("user %d changed by putting it back: %+v, was %+v", id, again, u)
		}
		if u.PreferredLanguage != want[0] || u.TimeZone != want[1] {
			t.Errorf("user %d imported as %q, %q; want %q", id, u.PreferredLanguage, u.TimeZone, want)
		}
	}
}

// TestEveryPathTakesTheSameLanguagesAndZones: usersCreate, usersUpdate and
// the contacts import take the same values, store them in the same form,
// and refuse the same values, naming the field or the column.
func TestEveryPathTakesTheSameLanguagesAndZones(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	type value struct{ language, zone, wantLanguage, wantZone string }
	taken := []value{
		{"en", "US/Eastern", "en", "US/Eastern"},
		{"EN-us", "us/pacific", "en-US", "US/Pacific"},
		{"iw", "Etc/GMT+5", "he", "Etc/GMT+5"},
		{"zh-hant-tw", "America/New_York", "zh-Hant-TW", "America/New_York"},
		{"tlh", "UTC", "tlh", "UTC"},
	}
	refusedZones := []string{"Local", "localtime", "Factory", "Mars/Olympus_Mons", "posix/UTC", "+05:00"}
	refusedLanguages := []string{"xx", "und", "x-private", "english", "en-", "e"}

	// The import.
	var csv strings.Builder
	csv.WriteString("externalId,firstName,lastName,language,timeZone\r\n")
	for i, v := range taken {
		fmt.Fprintf(&csv, "OK-%d,Ada,Lovelace,%s,%s\r\n", i, v.language, v.zone)
	}
	for i, z := range refusedZones {
		fmt.Fprintf(&csv, "BADZ-%d,Ada,Lovelace,en,%s\r\n", i, z)
	}
	for i, l := range refusedLanguages {
		fmt.Fprintf(&csv, "BADL-%d,Ada,Lovelace,%s,UTC\r\n", i, l)
	}
	res := mustUpload(t, s, tenant, tok, "locales", csv.String())
	if res.Created != int64(len(taken)) || res.ErrorCount != int64(len(refusedZones)+len(refusedLanguages)) {
		t.Fatalf("import %+v", res)
	}
	for i, e := range res.Errors {
		want, col := refusedZones, "timeZone"
		j := i
		if i >= len(refusedZones) {
			want, col, j = refusedLanguages, "language", i-len(refusedZones)
		}
		if e.Line != 2+len(taken)+i || e.Column != col || e.Value != want[j] {
			t.Errorf("row problem %d = %+v, want line %d column %s value %q", i, e, 2+len(taken)+i, col, want[j])
		}
	}
	for i, v := range taken {
		c := find(t, s, tok, "", map[string]any{"externalId": fmt.Sprintf("OK-%d", i)}).Items[0]
		if c.Language != v.wantLanguage || c.TimeZone != v.wantZone {
			t.Errorf("import of %q, %q stored %q, %q; want %q, %q", v.language, v.zone, c.Language, c.TimeZone, v.wantLanguage, v.wantZone)
		}
	}

	// usersCreate and usersUpdate.
	users := "/" + tenant + "/directory/staff/users"
	name := map[string]any{"first": "Ada", "last": "Lovelace"}
	existing := directoryUser(t, s, tenant, "", "Grace", "Hopper")
	for _, v := range taken {
		r := s.Create(t, users, tok, map[string]any{"name": name, "preferredLanguage": v.language, "timeZone": v.zone})
		var u model.UserProfile
		r.JSON(t, &u)
		if u.PreferredLanguage != v.wantLanguage || u.TimeZone != v.wantZone {
			t.Errorf("usersCreate of %q, %q stored %q, %q; want %q, %q", v.language, v.zone, u.PreferredLanguage, u.TimeZone, v.wantLanguage, v.wantZone)
		}
		r = s.Do(t, http.MethodPut, userPath(tenant, existing), tok, map[string]any{"name": name, "preferredLanguage": v.language, "timeZone": v.zone})
		if r.Status != http.StatusNoContent {
			t.Fatalf("usersUpdate to %q, %q: %d %s", v.language, v.zone, r.Status, r.Body)
		}
		if u := readUser(t, s, tenant, existing); u.PreferredLanguage != v.wantLanguage || u.TimeZone != v.wantZone {
			t.Errorf("usersUpdate of %q, %q stored %q, %q; want %q, %q", v.language, v.zone, u.PreferredLanguage, u.TimeZone, v.wantLanguage, v.wantZone)
		}
	}
	for _, z := range refusedZones {
		refusedAt(t, s.Do(t, http.MethodPost, users, tok, map[string]any{"name": name, "timeZone": z}), "body.timeZone")
		refusedAt(t, s.Do(t, http.MethodPut, userPath(tenant, existing), tok, map[string]any{"name": name, "preferredLanguage": "en", "timeZone": z}), "body.timeZone")
	}
	for _, l := range refusedLanguages {
		refusedAt(t, s.Do(t, http.MethodPost, users, tok, map[string]any{"name": name, "preferredLanguage": l}), "body.preferredLanguage")
		refusedAt(t, s.Do(t, http.MethodPut, userPath(tenant, existing), tok, map[string]any{"name": name, "preferredLanguage": l, "timeZone": "UTC"}), "body.preferredLanguage")
	}
}

// TestAValueStoredBeforeTheRuleIsKeptWhenPutBack: a language and time zone
// the rule refuses, stored by an import of an earlier version, are read as
// stored and kept by a PUT that sends them back, which changes the rest;
// another refused value is a 400 naming the field, and a stored spelling
// the rule takes is put in the rule's form.
func TestAValueStoredBeforeTheRuleIsKeptWhenPutBack(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	id := directoryUser(t, s, tenant, "", "Ada", "Lovelace")
	if err := storagetest.StorePersonLocale(context.Background(), s.DB, tenant, id, "xx", "Local"); err != nil {
		t.Fatal(err)
	}
	u := readUser(t, s, tenant, id)
	if u.PreferredLanguage != "xx" || u.TimeZone != "Local" {
		t.Fatalf("read %q, %q", u.PreferredLanguage, u.TimeZone)
	}
	u.Name.First = "Augusta Ada"
	if r := putBack(t, s, tenant, u); r.Status != http.StatusNoContent {
		t.Fatalf("put back: %d %s", r.Status, r.Body)
	}
	if again := readUser(t, s, tenant, id); again.Name.First != "Augusta Ada" || again.PreferredLanguage != "xx" || again.TimeZone != "Local" {
		t.Fatalf("after put back: %+v", again)
	}
	body := map[string]any{"name": u.Name, "preferredLanguage": "xx", "timeZone": "localtime"}
	refusedAt(t, s.Do(t, http.MethodPut, userPath(tenant, id), tok, body), "body.timeZone")
	body = map[string]any{"name": u.Name, "preferredLanguage": "yy", "timeZone": "Local"}
	refusedAt(t, s.Do(t, http.MethodPut, userPath(tenant, id), tok, body), "body.preferredLanguage")
	body = map[string]any{"name": u.Name, "preferredLanguage": "fr", "timeZone": "Local"}
	if r := s.Do(t, http.MethodPut, userPath(tenant, id), tok, body); r.Status != http.StatusNoContent {
		t.Fatalf("a new language beside the stored zone: %d %s", r.Status, r.Body)
	}
	if again := readUser(t, s, tenant, id); again.PreferredLanguage != "fr" || again.TimeZone != "Local" {
		t.Fatalf("after the new language: %+v", again)
	}
	// A stored spelling of a valid tag or zone takes the rule's form.
	if err := storagetest.StorePersonLocale(context.Background(), s.DB, tenant, id, "EN-us", "us/eastern"); err != nil {
		t.Fatal(err)
	}
	if r := putBack(t, s, tenant, readUser(t, s, tenant, id)); r.Status != http.StatusNoContent {
		t.Fatalf("put back: %d %s", r.Status, r.Body)
	}
	if again := readUser(t, s, tenant, id); again.PreferredLanguage != "en-US" || again.TimeZone != "US/Eastern" {
		t.Fatalf("a stored spelling put back: %+v", again)
	}
}
