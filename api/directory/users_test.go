package directory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

type profile struct {
	ID, DirectoryID, ExternalID, PreferredLanguage, TimeZone string
	Name                                                     struct{ First, Middle, Last string }
	SelfServiceSettings                                      struct{ CanJoinGroups, ShowInGroupDirectory bool }
	MobileApps                                               []struct{ InstallationID, Platform, PushToken string }
	ContactInformation                                       struct {
		Emails  []struct{ Address, VerificationStatus string }
		Phones  []struct{ Number string }
		Devices []struct{ App, Token string }
	}
	NotificationPreferences struct{ GroupIDs, LocationIDs, WeatherCategories []string }
	CreatedAt, UpdatedAt    time.Time
}

func TestUsers(t *testing.T) {
	t.Parallel()
	e := start(t)

	// Create.
	r := want(t, e.do(t, "POST", e.base()+"/users", map[string]any{
		"name": map[string]any{"first": " Ada ", "last": "Lovelace"}, "externalId": "E-1", "preferredLanguage": "es", "timeZone": "America/Chicago",
		"mobileApps": []map[string]any{{"installationId": "ios-1", "platform": "ios", "pushToken": "push-token-0001"}},
	}), 201)
	var p profile
	r.JSON(t, &p)
	if p.ID == "" || p.DirectoryID != "staff" || p.ExternalID != "E-1" || p.Name.First != "Ada" || p.PreferredLanguage != "es" ||
		p.TimeZone != "America/Chicago" || !p.SelfServiceSettings.CanJoinGroups || len(p.MobileApps) != 1 ||
		len(p.ContactInformation.Devices) != 1 || p.ContactInformation.Devices[0].App != "myalerts" ||
		p.NotificationPreferences.GroupIDs == nil || r.Header.Get("Location") != e.user(p.ID) {
		t.Fatalf("%s (Location %q)", r.Body, r.Header.Get("Location"))
	}
	// Defaults.
	var d profile
	want(t, e.do(t, "GET", e.user(e.createUser(t, "Grace", "Hopper")), nil), 200).JSON(t, &d)
	if d.PreferredLanguage != "en" || d.TimeZone != "UTC" || d.ExternalID != "" || !d.SelfServiceSettings.ShowInGroupDirectory {
		t.Fatalf("%+v", d)
	}

	// Bad input names the field.
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": map[string]any{"first": " ", "last": ""}}, "body.name"},
		{map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "preferredLanguage": "xx"}, "body.preferredLanguage"},
		{map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "timeZone": "Mars/Olympus"}, "body.timeZone"},
		{map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "mobileApps": []map[string]any{{"installationId": "x", "platform": "symbian"}}}, "body.mobileApps"},
		{map[string]any{}, "body"},
		// A blank external id is refused, as usersCreateExternalId does.
		{map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "externalId": "   "}, "body.externalId"},
		{map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "externalId": ""}, "body.externalId"},
		// The same push token twice in one body is a 400, not a 409 about another user.
		{map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "mobileApps": []map[string]any{
			{"installationId": "a-1", "platform": "android", "pushToken": "push-token-twice"},
			{"installationId": "a-2", "platform": "ios", "pushToken": "push-token-twice"}}}, "body.mobileApps[1].pushToken"},
	} {
		wantProblem(t, e.do(t, "POST", e.base()+"/users", c.body), 400, c.field)
	}
	// A duplicate external id, and a push token of another user, are 409s.
	wantProblem(t, e.do(t, "POST", e.base()+"/users", map[string]any{"name": map[string]any{"first": "X", "last": "Y"}, "externalId": "E-1"}), 409, "")
	wantProblem(t, e.do(t, "POST", e.base()+"/users", map[string]any{"name": map[string]any{"first": "X", "last": "Y"},
		"mobileApps": []map[string]any{{"installationId": "a-1", "platform": "android", "pushToken": "push-token-0001"}}}), 409, "")
	// ... but the same external id in another directory is fine.
	want(t, e.do(t, "POST", "/"+e.tenant+"/directory/contractors/users", map[string]any{"name": map[string]any{"first": "X", "last": "Y"}, "externalId": "E-1"}), 201)

	// Update the base information.
	want(t, e.do(t, "PUT", e.user(p.ID), map[string]any{
		"name": map[string]any{"first": "Augusta", "middle": "Ada", "last": "King"}, "preferredLanguage": "fr", "timeZone": "Europe/London",
		"selfServiceSettings": map[string]any{"canJoinGroups": false, "showInGroupDirectory": true},
	}), 204)
	want(t, e.do(t, "GET", e.user(p.ID), nil), 200).JSON(t, &p)
	if p.Name.First != "Augusta" || p.Name.Middle != "Ada" || p.PreferredLanguage != "fr" || p.TimeZone != "Europe/London" ||
		p.SelfServiceSettings.CanJoinGroups || len(p.MobileApps) != 1 || !p.UpdatedAt.After(p.CreatedAt.Add(-time.Second)) {
		t.Fatalf("%+v", p)
	}
	// An empty list of apps removes them and their devices.
	want(t, e.do(t, "PUT", e.user(p.ID), map[string]any{"name": map[string]any{"first": "Augusta", "last": "King"},
		"preferredLanguage": "fr", "timeZone": "Europe/London", "mobileApps": []any{}}), 204)
	want(t, e.do(t, "GET", e.user(p.ID), nil), 200).JSON(t, &p)
	if len(p.MobileApps) != 0 || len(p.ContactInformation.Devices) != 0 || p.SelfServiceSettings.CanJoinGroups {
		t.Fatalf("%+v", p)
	}
	wantProblem(t, e.do(t, "PUT", e.user(p.ID), map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "preferredLanguage": "en", "timeZone": "Nowhere"}), 400, "body.timeZone")
	tw := wantProblem(t, e.do(t, "PUT", e.user(p.ID), map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "preferredLanguage": "en", "timeZone": "UTC", "mobileApps": []map[string]any{
		{"installationId": "i-1", "platform": "ios", "pushToken": "push-token-twice"},
		{"installationId": "i-2", "platform": "ios", "pushToken": "push-token-twice"}}}), 400, "body.mobileApps[1].pushToken")
	if !strings.Contains(tw.Error(), "given twice") {
		t.Fatalf("%s", tw.Error())
	}

	// External ids.
	other := e.createUser(t, "Alan", "Turing")
	want(t, e.do(t, "POST", e.user(other)+"/externalId", map[string]any{"externalId": "E-2"}), 204)
	wantProblem(t, e.do(t, "POST", e.user(other)+"/externalId", map[string]any{"externalId": "E-1"}), 409, "")
	want(t, e.do(t, "POST", e.user(p.ID)+"/externalId", map[string]any{"externalId": "E-1b"}), 204)
	want(t, e.do(t, "POST", e.user(other)+"/externalId", map[string]any{"externalId": "E-1"}), 204)
	wantProblem(t, e.do(t, "POST", e.user(other)+"/externalId", map[string]any{"externalId": ""}), 400, "body.externalId")

	// Unknown users are 404s everywhere; an id not written as ids are
	// (digits without sign or leading zeros) is a 400 naming it.
	for _, path := range []string{e.user("999999999"), e.user("0")} {
		wantProblem(t, e.do(t, "GET", path, nil), 404, "")
	}
	for _, path := range []string{e.user("abc"), e.user("-1"), e.user("01")} {
		wantProblem(t, e.do(t, "GET", path, nil), 400, "path.userId")
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", ""}, {"DELETE", ""}, {"POST", "/externalId"}, {"GET", "/contact"}, {"GET", "/notifications"},
		{"POST", "/contact/emails"}, {"GET", "/contact/emails/a%40b.c"}, {"POST", "/contact/phones"}, {"GET", "/notifications/weather"},
		{"POST", "/notifications/locations"}, {"POST", "/notifications/memberships"},
	} {
		var body any
		switch c.path {
		case "":
			if c.method == "PUT" {
				body = map[string]any{"name": map[string]any{"first": "A", "last": "B"}, "preferredLanguage": "en", "timeZone": "UTC"}
			}
		case "/externalId":
			body = map[string]any{"externalId": "E-9"}
		case "/contact/emails":
			body = map[string]any{"address": "a@b.c"}
		case "/contact/phones":
			body = map[string]any{"number": "+12025550100"}
		case "/notifications/locations":
			body = map[string]any{"name": "Home", "geoLocation": map[string]any{"latitude": 1, "longitude": 2}}
		case "/notifications/memberships":
			body = "1"
		}
		wantProblem(t, e.do(t, c.method, e.user("999999999")+c.path, body), 404, "")
	}
	// A user of another directory is not found in this one.
	wantProblem(t, e.do(t, "GET", "/"+e.tenant+"/directory/contractors/users/"+p.ID, nil), 404, "")

	// Another tenant's token: the path tenant is not its own, or the user is not its own.
	otherTenant := stacktest.NewTenant()
	otherTok := e.s.Token(t, otherTenant, "directory:public")
	wantProblem(t, e.s.Do(t, "GET", e.user(p.ID), otherTok, nil), 404, "")
	wantProblem(t, e.s.Do(t, "GET", "/"+otherTenant+"/directory/staff/users/"+p.ID, otherTok, nil), 404, "")
	wantProblem(t, e.s.Do(t, "DELETE", "/"+otherTenant+"/directory/staff/users/"+p.ID, otherTok, nil), 404, "")
	// The wrong scope is a 403.
	wantProblem(t, e.s.Do(t, "GET", e.user(p.ID), e.s.Token(t, e.tenant, "tamarack"), nil), 403, "")

	// Delete.
	want(t, e.do(t, "DELETE", e.user(other), nil), 204)
	wantProblem(t, e.do(t, "GET", e.user(other), nil), 404, "")
	wantProblem(t, e.do(t, "DELETE", e.user(other), nil), 404, "")
}

func TestFindUsers(t *testing.T) {
	t.Parallel()
	e := start(t)
	ids := map[string]string{}
	for i, n := range []struct{ first, last string }{{"Ada", "Lovelace"}, {"Grace", "Hopper"}, {"Alan", "Turing"}, {"Adele", "Goldberg"}} {
		ids[n.last] = e.createUser(t, n.first, n.last, map[string]any{"externalId": fmt.Sprintf("X-%d", i)})
	}
	want(t, e.do(t, "POST", e.user(ids["Hopper"])+"/contact/emails", map[string]any{"address": "grace@navy.example"}), 201)
	want(t, e.do(t, "POST", e.user(ids["Turing"])+"/contact/phones", map[string]any{"number": "+442079460000"}), 201)
	var g struct{ ID int64 }
	want(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": "Pioneers", "isPublic": true}), 201).JSON(t, &g)
	want(t, e.do(t, "POST", e.user(ids["Goldberg"])+"/notifications/memberships", fmt.Sprint(g.ID)), 204)
	// Someone in another directory and another tenant never shows.
	want(t, e.do(t, "POST", "/"+e.tenant+"/directory/other/users", map[string]any{"name": map[string]any{"first": "Ada", "last": "Other"}}), 201)

	type page struct {
		Paging struct{ Page, PageSize, TotalCount, TotalPages int }
		Items  []struct {
			ID, ExternalID string
			Name           struct{ First, Last string }
			Emails, Phones []string
		}
	}
	find := func(q any, query string) page {
		t.Helper()
		var p page
		want(t, e.do(t, "POST", e.base()+"/users/query"+query, q), 200).JSON(t, &p)
		return p
	}
	lasts := func(p page) string {
		var s []string
		for _, it := range p.Items {
			s = append(s, it.Name.Last)
		}
		return strings.Join(s, ",")
	}
	if got := lasts(find(nil, "")); got != "Goldberg,Hopper,Lovelace,Turing" {
		t.Fatalf("all: %s", got)
	}
	if got := lasts(find(map[string]any{}, "?sort=-firstName")); got != "Hopper,Turing,Goldberg,Lovelace" {
		t.Fatalf("sorted by first name descending: %s", got)
	}
	p := find(map[string]any{"name": "AD"}, "?pageSize=1&page=2&sort=lastName")
	if lasts(p) != "Lovelace" || p.Paging.TotalCount != 2 || p.Paging.TotalPages != 2 || p.Paging.Page != 2 {
		t.Fatalf("paged: %+v", p)
	}
	if got := find(map[string]any{"email": "GRACE@navy.example"}, ""); lasts(got) != "Hopper" || got.Items[0].Emails[0] != "grace@navy.example" {
		t.Fatalf("by email: %+v", got)
	}
	if got := find(map[string]any{"phone": "+44 20 7946 0000"}, ""); lasts(got) != "Turing" || got.Items[0].Phones[0] != "+442079460000" {
		t.Fatalf("by phone: %+v", got)
	}
	if got := lasts(find(map[string]any{"externalId": "X-0"}, "")); got != "Lovelace" {
		t.Fatalf("by external id: %s", got)
	}
	if got := lasts(find(map[string]any{"groupId": fmt.Sprint(g.ID)}, "")); got != "Goldberg" {
		t.Fatalf("by group: %s", got)
	}
	if got := lasts(find(map[string]any{"name": "nobody"}, "")); got != "" {
		t.Fatalf("nobody: %s", got)
	}
	wantProblem(t, e.do(t, "POST", e.base()+"/users/query?sort=shoeSize", nil), 400, "query.sort")
	wantProblem(t, e.do(t, "POST", e.base()+"/users/query?pageSize=501", nil), 400, "query.pageSize")
	wantProblem(t, e.do(t, "POST", e.base()+"/users/query", map[string]any{"phone": "not a phone"}), 400, "body.phone")
	wantProblem(t, e.do(t, "POST", e.base()+"/users/query", map[string]any{"groupId": "x"}), 400, "body.groupId")
}

// TestDeleteRemovesEverything: a user's rows hang off it and go with it.
func TestDeleteRemovesEverything(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace", map[string]any{"mobileApps": []map[string]any{{"installationId": "i1", "platform": "ios", "pushToken": "token-abcdefgh"}}})
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "ada@example.com"}), 201)
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "+12025550123"}), 201)
	want(t, e.do(t, "POST", e.user(id)+"/notifications/locations", map[string]any{"name": "Home", "geoLocation": map[string]any{"latitude": 51.5, "longitude": -0.12}}), 201)
	want(t, e.do(t, "POST", e.user(id)+"/notifications/weather", map[string]any{"notifications": []map[string]any{{"category": "Tornado", "channels": []string{"Email"}}}}), 204)
	var g struct{ ID int64 }
	want(t, e.do(t, "POST", e.base()+"/groups", map[string]any{"name": "Everyone", "isPublic": true}), 201).JSON(t, &g)
	want(t, e.do(t, "POST", e.user(id)+"/notifications/memberships", fmt.Sprint(g.ID)), 204)
	e.resend(t, emailPath(e, id, "ada@example.com"))
	e.emailCode(t, "ada@example.com", 1)

	want(t, e.do(t, "DELETE", e.user(id), nil), 204)
	rows, err := storagetest.PersonRowCounts(context.Background(), e.s.DB, e.tenant)
	if err != nil {
		t.Fatal(err)
	}
	for table, n := range rows {
		if n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
	// The group stays.
	want(t, e.do(t, "POST", e.base()+fmt.Sprintf("/groups/%d/members", g.ID), nil), 200)
}
