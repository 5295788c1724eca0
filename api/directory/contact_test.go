package directory_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestEmailsAndPhones(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")

	// Emails: normalised, duplicates refused whatever their case, bad ones named.
	var em struct{ Address, Label, VerificationStatus string }
	want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": " Ada.Lovelace+alerts@Example.COM ", "label": "personal"}), 201).JSON(t, &em)
	if em.Address != "ada.lovelace+alerts@example.com" || em.Label != "personal" || em.VerificationStatus != "Unverified" {
		t.Fatalf("%+v", em)
	}
	wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "ADA.LOVELACE+alerts@example.com"}), 409, "")
	for _, bad := range []string{"not-an-address", "Ada <ada@example.com>", "ada@", "@example.com", "a b@example.com"} {
		wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": bad}), 400, "body.address")
	}
	wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "x@example.com", "label": "secret"}), 400, "body.label")

	// Read it back URL-encoded, in any case; a literal + stays a +.
	for _, seg := range []string{"ada.lovelace%2Balerts%40example.com", "Ada.Lovelace+alerts%40EXAMPLE.com", "ada.lovelace+alerts@example.com"} {
		want(t, e.do(t, "GET", e.user(id)+"/contact/emails/"+seg, nil), 200).JSON(t, &em)
		if em.Address != "ada.lovelace+alerts@example.com" {
			t.Fatalf("%s: %+v", seg, em)
		}
	}
	wantProblem(t, e.do(t, "GET", e.user(id)+"/contact/emails/nobody%40example.com", nil), 404, "")
	wantProblem(t, e.do(t, "GET", e.user(id)+"/contact/emails/not-an-address", nil), 400, "path.emailAddress")

	// A local part that needs its quotes keeps them, so the address
	// answered is the one given and reaches it again: without them
	// "a@b"@example.com would read as a@b@example.com, which is no address.
	for _, quoted := range []string{`"a b"@example.com`, `"a@b"@example.com`} {
		want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": quoted}), 201).JSON(t, &em)
		if em.Address != quoted {
			t.Fatalf("%s answered as %+v", quoted, em)
		}
		seg := url.PathEscape(em.Address)
		want(t, e.do(t, "GET", e.user(id)+"/contact/emails/"+seg, nil), 200)
		want(t, e.do(t, "DELETE", e.user(id)+"/contact/emails/"+seg, nil), 204)
	}

	// Phones: E.164 through libphonenumber; national numbers with a country.
	var ph struct {
		Number, Type, VerificationStatus string
		CanText, CanCall                 bool
	}
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "(202) 555-0123", "country": "us", "type": "Work", "canCall": false}), 201).JSON(t, &ph)
	if ph.Number != "+12025550123" || ph.Type != "Work" || !ph.CanText || ph.CanCall || ph.VerificationStatus != "Unverified" {
		t.Fatalf("%+v", ph)
	}
	wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "+1 202 555 0123"}), 409, "")
	for _, bad := range []string{"hello", "12345", "+1 555 123 4567", "2025550123"} {
		wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": bad}), 400, "body.number")
	}
	wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "+12025550100", "type": "Pager"}), 400, "body.type")
	want(t, e.do(t, "POST", e.user(id)+"/contact/phones", map[string]any{"number": "+33 1 42 68 53 00"}), 201)
	want(t, e.do(t, "GET", e.user(id)+"/contact/phones/%2B12025550123", nil), 200).JSON(t, &ph)
	if ph.Number != "+12025550123" {
		t.Fatalf("%+v", ph)
	}
	wantProblem(t, e.do(t, "GET", e.user(id)+"/contact/phones/%2B12025550199", nil), 404, "")
	wantProblem(t, e.do(t, "GET", e.user(id)+"/contact/phones/garbage", nil), 400, "path.phoneNumber")

	// The contact information lists them.
	var ci struct {
		Emails  []struct{ Address string }
		Phones  []struct{ Number string }
		Devices []any
	}
	want(t, e.do(t, "GET", e.user(id)+"/contact", nil), 200).JSON(t, &ci)
	if len(ci.Emails) != 1 || len(ci.Phones) != 2 || ci.Phones[1].Number != "+33142685300" || ci.Devices == nil {
		t.Fatalf("%+v", ci)
	}

	// Remove.
	want(t, e.do(t, "DELETE", e.user(id)+"/contact/emails/ada.lovelace%2Balerts%40example.com", nil), 204)
	wantProblem(t, e.do(t, "DELETE", e.user(id)+"/contact/emails/ada.lovelace%2Balerts%40example.com", nil), 404, "")
	want(t, e.do(t, "DELETE", e.user(id)+"/contact/phones/%2B33142685300", nil), 204)
	wantProblem(t, e.do(t, "GET", e.user(id)+"/contact/phones/%2B33142685300", nil), 404, "")
	// Unknown addresses have no verification either.
	wantProblem(t, e.do(t, "POST", emailPath(e, id, "gone@example.com")+"/verification/nonce", map[string]any{"nonce": "nonce-gone-1"}), 404, "")
	wantProblem(t, e.do(t, "POST", phonePath(e, id, "+33142685300")+"/verification/nonce", map[string]any{"nonce": "nonce-gone-1"}), 404, "")
}

func TestNotificationPreferences(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")
	group := func(name string, public bool, parent int64) int64 {
		t.Helper()
		body := map[string]any{"name": name, "isPublic": public}
		if parent != 0 {
			body["parentId"] = fmt.Sprint(parent)
		}
		var g struct{ ID int64 }
		want(t, e.do(t, "POST", e.base()+"/groups", body), 201).JSON(t, &g)
		return g.ID
	}
	campus := group("Campus", true, 0)
	fire := group("Fire wardens", true, campus)
	board := group("Board", false, 0)

	// Memberships.
	mem := e.user(id) + "/notifications/memberships"
	want(t, e.do(t, "POST", mem, fmt.Sprint(fire)), 204)
	wantProblem(t, e.do(t, "POST", mem, fmt.Sprint(fire)), 409, "")
	wantProblem(t, e.do(t, "POST", mem, fmt.Sprint(board)), 403, "")
	wantProblem(t, e.do(t, "POST", mem, "999999999"), 404, "")
	wantProblem(t, e.do(t, "POST", mem, "abc"), 400, "body")
	if p := wantProblem(t, e.do(t, "POST", mem, ""), 400, "body"); p.Errors[0].ErrorMessage == "" {
		t.Errorf("an empty group id is refused without a message: %+v", p.Errors)
	}
	wantProblem(t, e.do(t, "POST", mem, map[string]any{"groupId": "1"}), 400, "body")
	// The id is written as the group's paths take it: leading zeros are
	// refused in the body as in the path.
	wantProblem(t, e.do(t, "POST", mem, "00"+fmt.Sprint(campus)), 400, "body")
	wantProblem(t, e.do(t, "POST", mem, "0"), 400, "body")
	want(t, e.do(t, "POST", mem, fmt.Sprint(campus)), 204)
	wantProblem(t, e.do(t, "DELETE", mem+"/00"+fmt.Sprint(campus), nil), 400, "path.groupId")
	want(t, e.do(t, "DELETE", mem+"/"+fmt.Sprint(campus), nil), 204)
	wantProblem(t, e.do(t, "DELETE", mem+"/"+fmt.Sprint(campus), nil), 404, "")
	// A user whose settings forbid joining cannot join.
	locked := e.createUser(t, "Locked", "Out", map[string]any{"selfServiceSettings": map[string]any{"canJoinGroups": false, "showInGroupDirectory": false}})
	wantProblem(t, e.do(t, "POST", e.user(locked)+"/notifications/memberships", fmt.Sprint(campus)), 403, "")
	// An alerting administrator's token adds users to any group: a private
	// one, and whatever the user's settings.
	admin := e.s.Token(t, e.tenant, "directory:public", "tamarack")
	want(t, e.s.Do(t, "POST", mem, admin, fmt.Sprint(board)), 204)
	want(t, e.s.Do(t, "POST", e.user(locked)+"/notifications/memberships", admin, fmt.Sprint(campus)), 204)
	wantProblem(t, e.s.Do(t, "POST", mem, admin, fmt.Sprint(board)), 409, "")
	want(t, e.do(t, "DELETE", mem+"/"+fmt.Sprint(board), nil), 204)

	// Locations.
	loc := e.user(id) + "/notifications/locations"
	r := want(t, e.do(t, "POST", loc, map[string]any{"name": "Home", "address": map[string]any{"city": "London", "country": "GB"},
		"geoLocation": map[string]any{"latitude": 51.5072, "longitude": -0.1276}}), 201)
	lid := r.Header.Get("X-Location-Id")
	if lid == "" || r.Header.Get("Location") != loc+"/"+lid {
		t.Fatalf("headers %v", r.Header)
	}
	var l struct {
		ID, Name    string
		Address     struct{ City, Country string }
		GeoLocation struct{ Latitude, Longitude float64 }
	}
	want(t, e.do(t, "GET", loc+"/"+lid, nil), 200).JSON(t, &l)
	if l.ID != lid || l.Name != "Home" || l.Address.City != "London" || l.GeoLocation.Latitude != 51.5072 || l.GeoLocation.Longitude != -0.1276 {
		t.Fatalf("%+v", l)
	}
	for _, c := range []struct {
		geo   map[string]any
		field string
	}{
		{map[string]any{"latitude": 91, "longitude": 0}, "body.geoLocation.latitude"},
		{map[string]any{"latitude": -90.5, "longitude": 0}, "body.geoLocation.latitude"},
		{map[string]any{"latitude": 0, "longitude": 180.01}, "body.geoLocation.longitude"},
		{map[string]any{"latitude": "north", "longitude": 0}, "body.geoLocation.latitude"},
		{map[string]any{"latitude": 0}, "body.geoLocation"},
	} {
		wantProblem(t, e.do(t, "POST", loc, map[string]any{"name": "Bad", "geoLocation": c.geo}), 400, c.field)
	}
	wantProblem(t, e.do(t, "POST", loc, map[string]any{"name": " ", "geoLocation": map[string]any{"latitude": 0, "longitude": 0}}), 400, "body.name")
	second := want(t, e.do(t, "POST", loc, map[string]any{"name": "Office", "geoLocation": map[string]any{"latitude": -33.86, "longitude": 151.2}}), 201).Header.Get("X-Location-Id")

	// Weather.
	w := e.user(id) + "/notifications/weather"
	want(t, e.do(t, "POST", w, map[string]any{"notifications": []map[string]any{
		{"category": "Tornado", "channels": []string{"Email", "Text"}},
		{"category": "Flood", "channels": []string{"Text"}, "locationId": second},
	}}), 204)
	want(t, e.do(t, "POST", w, map[string]any{"notifications": []map[string]any{{"category": "Tornado", "channels": []string{"Voice", "Email"}}}}), 204)
	var wc struct {
		Count int
		Items []struct {
			Category, CategoryName, LocationID string
			Channels                           []string
		}
	}
	want(t, e.do(t, "GET", w, nil), 200).JSON(t, &wc)
	if wc.Count != 2 || wc.Items[0].Category != "Flood" || wc.Items[0].LocationID != second || wc.Items[0].CategoryName != "Flood" ||
		wc.Items[1].Category != "Tornado" || strings.Join(wc.Items[1].Channels, ",") != "Email,Text,Voice" {
		t.Fatalf("%+v", wc)
	}
	for _, c := range []struct {
		n     map[string]any
		field string
	}{
		{map[string]any{"category": "Meteor", "channels": []string{"Email"}}, "body.notifications[0].category"},
		{map[string]any{"category": "Tornado", "channels": []string{"Pigeon"}}, "body.notifications[0].channels"},
		{map[string]any{"category": "Tornado"}, "body.notifications[0].channels"},
		{map[string]any{"category": "Tornado", "channels": []string{"Email"}, "locationId": "999999"}, "body.notifications[0].locationId"},
	} {
		wantProblem(t, e.do(t, "POST", w, map[string]any{"notifications": []any{c.n}}), 400, c.field)
	}
	wantProblem(t, e.do(t, "POST", w, map[string]any{"notifications": []any{}}), 400, "body.notifications")

	// The summary brings them together; the profile names them in brief.
	var s struct {
		UserID      string
		Memberships struct {
			Count int
			Items []struct{ ID, Name, Path string }
		}
		Locations            struct{ Count int }
		WeatherNotifications struct{ Count int }
	}
	want(t, e.do(t, "GET", e.user(id)+"/notifications", nil), 200).JSON(t, &s)
	if s.UserID != id || s.Memberships.Count != 1 || s.Memberships.Items[0].Path != "Campus / Fire wardens" || s.Locations.Count != 2 || s.WeatherNotifications.Count != 2 {
		t.Fatalf("%+v", s)
	}
	var p profile
	want(t, e.do(t, "GET", e.user(id), nil), 200).JSON(t, &p)
	if strings.Join(p.NotificationPreferences.GroupIDs, ",") != fmt.Sprint(fire) || len(p.NotificationPreferences.LocationIDs) != 2 ||
		strings.Join(p.NotificationPreferences.WeatherCategories, ",") != "Flood,Tornado" {
		t.Fatalf("%+v", p.NotificationPreferences)
	}

	// Removing a channel keeps the rest; removing the last one or the category ends it.
	want(t, e.do(t, "DELETE", w, map[string]any{"notifications": []map[string]any{{"category": "Tornado", "channels": []string{"Voice"}}}}), 204)
	want(t, e.do(t, "DELETE", w, map[string]any{"notifications": []map[string]any{{"category": "Flood", "channels": []string{"Text"}, "locationId": second}}}), 204)
	want(t, e.do(t, "GET", w, nil), 200).JSON(t, &wc)
	if wc.Count != 1 || strings.Join(wc.Items[0].Channels, ",") != "Email,Text" {
		t.Fatalf("%+v", wc)
	}
	want(t, e.do(t, "DELETE", w, map[string]any{"notifications": []map[string]any{{"category": "Tornado"}}}), 204)
	wantProblem(t, e.do(t, "DELETE", w, map[string]any{"notifications": []map[string]any{{"category": "Tornado"}}}), 404, "")

	// Removing a location removes it (and subscriptions for it).
	want(t, e.do(t, "POST", w, map[string]any{"notifications": []map[string]any{{"category": "Flood", "channels": []string{"Email"}, "locationId": lid}}}), 204)
	want(t, e.do(t, "DELETE", loc+"/"+lid, nil), 204)
	wantProblem(t, e.do(t, "GET", loc+"/"+lid, nil), 404, "")
	wantProblem(t, e.do(t, "DELETE", loc+"/"+lid, nil), 404, "")
	wantProblem(t, e.do(t, "GET", loc+"/nope", nil), 400, "path.locationId")
	want(t, e.do(t, "GET", w, nil), 200).JSON(t, &wc)
	if wc.Count != 0 {
		t.Fatalf("%+v", wc)
	}
	// Another user's location is not this user's.
	other := e.createUser(t, "Other", "User")
	wantProblem(t, e.do(t, "GET", e.user(other)+"/notifications/locations/"+second, nil), 404, "")
}

// TestCountriesAreISO3166Codes: an address's country and a phone number's
// are ISO 3166-1 alpha-2 country codes, read in either case and kept in
// capitals; anything else is a 400 naming the field.
func TestCountriesAreISO3166Codes(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")
	loc := e.user(id) + "/notifications/locations"
	location := func(country string) map[string]any {
		return map[string]any{"name": "Home", "address": map[string]any{"city": "Somewhere", "country": country},
			"geoLocation": map[string]any{"latitude": 51.5, "longitude": -0.12}}
	}
	for _, bad := range []struct{ country, message string }{
		{"12", "not an ISO 3166-1"},      // digits
		{"ZZ", "not an ISO 3166-1"},      // unknown region
		{"zz", "not an ISO 3166-1"},      // in any case
		{"EU", "not an ISO 3166-1"},      // a group of countries
		{"UN", "not an ISO 3166-1"},      // reserved
		{"AC", "not an ISO 3166-1"},      // reserved for another use
		{"QM", "not an ISO 3166-1"},      // user-assigned
		{"XA", "not an ISO 3166-1"},      // user-assigned
		{"UK", "use GB"},                 // reserved, standing for GB
		{"SU", "withdrawn"},              // withdrawn
		{"USA", "length"},                // alpha-3
		{"U", "length"},                  // too short
		{"U\u00d1", "not an ISO 3166-1"}, // not ASCII letters
	} {
		p := wantProblem(t, e.do(t, "POST", loc, location(bad.country)), 400, "body.address.country")
		if len(p.Errors) != 1 || p.Errors[0].PropertyName != "address.country" || !strings.Contains(p.Errors[0].ErrorMessage, bad.message) {
			t.Errorf("country %q: %+v, want a failure at body.address.country saying %q", bad.country, p.Errors, bad.message)
		}
	}
	for given, kept := range map[string]string{"GB": "GB", "gb": "GB", "Pr": "PR", "AQ": "AQ", "XK": "XK"} {
		lid := want(t, e.do(t, "POST", loc, location(given)), 201).Header.Get("X-Location-Id")
		var l struct{ Address struct{ Country string } }
		want(t, e.do(t, "GET", loc+"/"+lid, nil), 200).JSON(t, &l)
		if l.Address.Country != kept {
			t.Errorf("country %q kept as %q, want %q", given, l.Address.Country, kept)
		}
	}
	// A phone number's country follows the same rule.
	phones := e.user(id) + "/contact/phones"
	wantProblem(t, e.do(t, "POST", phones, map[string]any{"number": "020 7946 0018", "country": "ZZ"}), 400, "body.country")
	wantProblem(t, e.do(t, "POST", phones, map[string]any{"number": "020 7946 0018", "country": "UK"}), 400, "body.country")
	var ph struct{ Number string }
	want(t, e.do(t, "POST", phones, map[string]any{"number": "020 7946 0018", "country": "gb"}), 201).JSON(t, &ph)
	if ph.Number != "+442079460018" {
		t.Fatalf("%+v", ph)
	}
}
