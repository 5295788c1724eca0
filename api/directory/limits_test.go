package directory_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
	storagedir "github.com/tocsin/tocsin/storage/directory"
)

// TestAUserPastALimitIsA409NamingTheField fills a user's emails, devices
// and locations up to their limits through the API: one more is a 409
// problem naming the field, and nothing of it is kept.
func TestAUserPastALimitIsA409NamingTheField(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")

	for i := range storage.MaxEmailsPerPerson {
		want(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": fmt.Sprintf("a%d@example.com", i)}), 201)
	}
	wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/emails", map[string]any{"address": "one-more@example.com"}), 409, "body.address")
	wantProblem(t, e.do(t, "GET", emailPath(e, id, "one-more@example.com"), nil), 404, "")

	// Push devices and the mobile apps' push tokens count together.
	for i := range storage.MaxDevicesPerPerson - 1 {
		want(t, e.do(t, "POST", e.user(id)+"/contact/devices", map[string]any{"platform": "ios", "token": fmt.Sprintf("push-token-%04d", i)}), 201)
	}
	apps := []map[string]any{
		{"installationId": "ios-1", "platform": "ios", "pushToken": "app-token-0001"},
		{"installationId": "ios-2", "platform": "ios", "pushToken": "app-token-0002"},
	}
	update := func(apps []map[string]any) map[string]any {
		return map[string]any{"name": map[string]any{"first": "Augusta", "last": "Lovelace"}, "preferredLanguage": "en", "timeZone": "UTC", "mobileApps": apps}
	}
	wantProblem(t, e.do(t, "PUT", e.user(id), update(apps)), 409, "body.mobileApps")
	want(t, e.do(t, "PUT", e.user(id), update(apps[:1])), 204)
	wantProblem(t, e.do(t, "POST", e.user(id)+"/contact/devices", map[string]any{"platform": "ios", "token": "push-token-more"}), 409, "body.token")
	var p profile
	want(t, e.do(t, "GET", e.user(id), nil), 200).JSON(t, &p)
	if len(p.ContactInformation.Emails) != storage.MaxEmailsPerPerson || len(p.ContactInformation.Devices) != storage.MaxDevicesPerPerson ||
		len(p.MobileApps) != 1 || p.Name.First != "Augusta" {
		t.Fatalf("%d emails, %d devices, %d mobile apps, first name %q", len(p.ContactInformation.Emails), len(p.ContactInformation.Devices),
			len(p.MobileApps), p.Name.First)
	}

	for i := range storage.MaxLocationsPerPerson {
		want(t, e.do(t, "POST", e.user(id)+"/notifications/locations", map[string]any{"name": fmt.Sprint("place ", i),
			"geoLocation": map[string]any{"latitude": 40, "longitude": -75}}), 201)
	}
	pr := wantProblem(t, e.do(t, "POST", e.user(id)+"/notifications/locations", map[string]any{"name": "one more",
		"geoLocation": map[string]any{"latitude": 40, "longitude": -75}}), 409, "body")
	if len(pr.Errors) != 1 || pr.Errors[0].Location != "body" {
		t.Fatalf("problem %+v", pr)
	}
	var prefs struct{ Locations struct{ Count int } }
	want(t, e.do(t, "GET", e.user(id)+"/notifications", nil), 200).JSON(t, &prefs)
	if prefs.Locations.Count != storage.MaxLocationsPerPerson {
		t.Fatalf("%d locations", prefs.Locations.Count)
	}
}

// TestAUsersGroupsAreCountedNotSilentlyCut: a user in more groups than a
// user may join (as one could be before the limit) has the first listed
// and memberships.count counting every one.
func TestAUsersGroupsAreCountedNotSilentlyCut(t *testing.T) {
	t.Parallel()
	e := start(t)
	id := e.createUser(t, "Ada", "Lovelace")
	person, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	const groups = storage.MaxGroupsPerPerson + 1
	// Past the limit only by committing despite the refusal.
	tx, err := e.s.DB.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func(tx *sqlx.Tx) { _ = tx.Rollback() }(tx)
	for i := range groups {
		g, err := storagedir.CreateGroup(t.Context(), tx, e.tenant, fmt.Sprintf("g%04d", i), "", 0, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storagedir.AddMembership(t.Context(), tx, e.tenant, g.ID, person); err != nil && i < storage.MaxGroupsPerPerson {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var prefs struct {
		Memberships struct {
			Items []struct{ ID, Name string }
			Count int
		}
	}
	want(t, e.do(t, "GET", e.user(id)+"/notifications", nil), 200).JSON(t, &prefs)
	if len(prefs.Memberships.Items) != storage.MaxGroupsPerPerson || prefs.Memberships.Count != groups || prefs.Memberships.Items[0].Name != "g0000" {
		t.Fatalf("%d memberships listed of %d", len(prefs.Memberships.Items), prefs.Memberships.Count)
	}
	var p profile
	want(t, e.do(t, "GET", e.user(id), nil), 200).JSON(t, &p)
	if len(p.NotificationPreferences.GroupIDs) != storage.MaxGroupsPerPerson {
		t.Fatalf("%d group ids", len(p.NotificationPreferences.GroupIDs))
	}
}
