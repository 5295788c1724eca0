package directory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// wantLimit fails the test unless err is the *storage.LimitError of limit.
func wantLimit(t *testing.T, err error, limit int) {
	t.Helper()
	var le *storage.LimitError
	if !errors.As(err, &le) || le.Limit != limit {
		t.Fatalf("error %v, want the limit of %d", err, limit)
	}
}

// TestAPersonHoldsNoMoreThanTheLimits fills a user up to each limit and
// adds one more: the one more is a *storage.LimitError and, its
// transaction rolled back, leaves nothing behind; a change that adds no
// row (channels merged into a weather subscription) still passes at the
// limit.
func TestAPersonHoldsNoMoreThanTheLimits(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	tx := func(fn func(tx *sqlx.Tx) error) error { return db.InTx(ctx, fn) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var person int64
	must(tx(func(tx *sqlx.Tx) (err error) {
		person, err = directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{})
		return err
	}))

	// Emails, phones and push devices, one transaction each.
	for i := range storage.MaxEmailsPerPerson {
		must(tx(func(tx *sqlx.Tx) error {
			_, err := directory.AddEmail(ctx, tx, tenant, person, fmt.Sprintf("a%d@example.com", i), "work")
			return err
		}))
	}
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		_, err := directory.AddEmail(ctx, tx, tenant, person, "one-more@example.com", "work")
		return err
	}), storage.MaxEmailsPerPerson)
	for i := range storage.MaxPhonesPerPerson {
		must(tx(func(tx *sqlx.Tx) error {
			_, err := directory.AddPhone(ctx, tx, tenant, person, storage.Phone{Number: fmt.Sprintf("+1202555%04d", i), Type: "Mobile"})
			return err
		}))
	}
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		_, err := directory.AddPhone(ctx, tx, tenant, person, storage.Phone{Number: "+12025559999", Type: "Mobile"})
		return err
	}), storage.MaxPhonesPerPerson)
	const pushDevices = storage.MaxDevicesPerPerson - 5
	for i := range pushDevices {
		must(tx(func(tx *sqlx.Tx) error {
			_, err := directory.AddPushDevice(ctx, tx, tenant, person, "ios", fmt.Sprintf("push-%d", i))
			return err
		}))
	}
	// The mobile apps' push tokens count with the push devices.
	apps := make([]directory.MobileApp, 6)
	for i := range apps {
		apps[i] = directory.MobileApp{InstallationID: fmt.Sprint(i), Platform: "ios", PushToken: fmt.Sprintf("app-%d", i)}
	}
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		return directory.UpdateUser(ctx, tx, tenant, person, directory.NewUser{}, apps, true)
	}), storage.MaxDevicesPerPerson)
	must(tx(func(tx *sqlx.Tx) error {
		return directory.UpdateUser(ctx, tx, tenant, person, directory.NewUser{}, apps[:5], true)
	}))
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		_, err := directory.AddPushDevice(ctx, tx, tenant, person, "ios", "push-one-more")
		return err
	}), storage.MaxDevicesPerPerson)
	ci, err := directory.ContactInformation(ctx, db, tenant, person)
	must(err)
	if len(ci.Emails) != storage.MaxEmailsPerPerson || len(ci.Phones) != storage.MaxPhonesPerPerson || len(ci.Devices) != storage.MaxDevicesPerPerson {
		t.Fatalf("%d emails, %d phones, %d devices, want %d, %d, %d", len(ci.Emails), len(ci.Phones), len(ci.Devices),
			storage.MaxEmailsPerPerson, storage.MaxPhonesPerPerson, storage.MaxDevicesPerPerson)
	}

	// Locations and weather subscriptions.
	var first int64
	for i := range storage.MaxLocationsPerPerson {
		id, err := directory.AddLocation(ctx, db, tenant, person, directory.NewLocation{Name: fmt.Sprint("place ", i)})
		must(err)
		if first == 0 {
			first = id
		}
	}
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		_, err := directory.AddLocation(ctx, tx, tenant, person, directory.NewLocation{Name: "one more"})
		return err
	}), storage.MaxLocationsPerPerson)
	changes := make([]directory.WeatherChange, storage.MaxWeatherPerPerson)
	for i := range changes {
		changes[i] = directory.WeatherChange{Category: fmt.Sprint("c", i%10), Channels: []string{"Email"}, Location: first + int64(i/10)}
	}
	must(tx(func(tx *sqlx.Tx) error { return directory.AddWeather(ctx, tx, tenant, person, changes) }))
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		return directory.AddWeather(ctx, tx, tenant, person, []directory.WeatherChange{changes[0], {Category: "c0", Channels: []string{"Email"}}})
	}), storage.MaxWeatherPerPerson)
	must(tx(func(tx *sqlx.Tx) error {
		return directory.AddWeather(ctx, tx, tenant, person, []directory.WeatherChange{{Category: "c0", Channels: []string{"Text"}, Location: first}})
	}))
	locs, err := directory.ListLocations(ctx, db, tenant, person)
	must(err)
	weather, err := directory.ListWeather(ctx, db, tenant, person)
	must(err)
	if len(locs) != storage.MaxLocationsPerPerson || len(weather) != storage.MaxWeatherPerPerson || len(weather[0].Channels) != 2 {
		t.Fatalf("%d locations, %d weather subscriptions (the first with %v)", len(locs), len(weather), weather[0].Channels)
	}

	// Group memberships.
	var groups []int64
	must(tx(func(tx *sqlx.Tx) error {
		for i := range storage.MaxGroupsPerPerson + 1 {
			g, err := directory.CreateGroup(ctx, tx, tenant, fmt.Sprintf("g%04d", i), "", 0, true)
			if err != nil {
				return err
			}
			groups = append(groups, g.ID)
		}
		for _, g := range groups[:storage.MaxGroupsPerPerson] {
			if _, err := directory.AddMembership(ctx, tx, tenant, g, person); err != nil {
				return err
			}
		}
		return nil
	}))
	wantLimit(t, tx(func(tx *sqlx.Tx) error {
		_, err := directory.AddMembership(ctx, tx, tenant, groups[storage.MaxGroupsPerPerson], person)
		return err
	}), storage.MaxGroupsPerPerson)
	members, total, err := directory.Memberships(ctx, db, tenant, person)
	must(err)
	if len(members) != storage.MaxGroupsPerPerson || total != storage.MaxGroupsPerPerson {
		t.Fatalf("%d memberships listed of %d, want %d", len(members), total, storage.MaxGroupsPerPerson)
	}
}

// TestMembershipsPastTheLimitAreCounted: a person holding more groups than
// the limit (as one could before it existed; here a transaction that
// commits despite the refusal) has the first MaxGroupsPerPerson listed and
// all of them counted, never silently fewer.
func TestMembershipsPastTheLimitAreCounted(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	person, err := directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range storage.MaxGroupsPerPerson + 2 {
		g, err := directory.CreateGroup(ctx, tx, tenant, fmt.Sprintf("g%04d", i), "", 0, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := directory.AddMembership(ctx, tx, tenant, g.ID, person); err != nil && i < storage.MaxGroupsPerPerson {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	members, total, err := directory.Memberships(ctx, db, tenant, person)
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != storage.MaxGroupsPerPerson || total != storage.MaxGroupsPerPerson+2 || members[0].Name != "g0000" {
		t.Fatalf("%d memberships listed (first %q) of %d, want %d of %d", len(members), members[0].Name, total,
			storage.MaxGroupsPerPerson, storage.MaxGroupsPerPerson+2)
	}
}

// TestTwoAddsAtTheLimitDoNotBothPass lines up two transactions that each
// add the last email address a user may have, holding the user's row
// locked as the directory's changes do: the second waits for the first
// and then counts its address, so it is refused.
func TestTwoAddsAtTheLimitDoNotBothPass(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	var person int64
	if err := db.InTx(ctx, func(tx *sqlx.Tx) (err error) {
		if person, err = directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{}); err != nil {
			return err
		}
		for i := range storage.MaxEmailsPerPerson - 1 {
			if _, err := directory.AddEmail(ctx, tx, tenant, person, fmt.Sprintf("a%d@example.com", i), "work"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	add := func(tx *sqlx.Tx, address string) error {
		if _, err := directory.LockUser(ctx, tx, tenant, "main", person); err != nil {
			return err
		}
		_, err := directory.AddEmail(ctx, tx, tenant, person, address, "work")
		return err
	}
	first, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback()
	if err := add(first, "first@example.com"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- db.InTx(context.Background(), func(tx *sqlx.Tx) error { return add(tx, "second@example.com") })
	}()
	storagetest.WaitBlocked(t, db, "AND id = $3 FOR UPDATE")
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	wantLimit(t, <-second, storage.MaxEmailsPerPerson)
	ci, err := directory.ContactInformation(ctx, db, tenant, person)
	if err != nil || len(ci.Emails) != storage.MaxEmailsPerPerson {
		t.Fatalf("%d emails (%v), want %d", len(ci.Emails), err, storage.MaxEmailsPerPerson)
	}
}

// TestAChangeAddingNoRowPassesAPersonOverTheLimit: a person holding more
// devices and weather subscriptions than the limits (as one could before
// they existed; here a transaction that commits despite the refusal)
// still changes their mobile apps without adding devices and merges
// channels into the subscriptions they have; one device or subscription
// more is refused.
func TestAChangeAddingNoRowPassesAPersonOverTheLimit(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	apps := []directory.MobileApp{{InstallationID: "1", Platform: "ios", PushToken: "app-1"}}
	changes := make([]directory.WeatherChange, storage.MaxWeatherPerPerson+1)
	for i := range changes {
		changes[i] = directory.WeatherChange{Category: fmt.Sprint("c", i), Channels: []string{"Email"}}
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	person, err := directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{MobileApps: apps})
	if err != nil {
		t.Fatal(err)
	}
	for i := range storage.MaxDevicesPerPerson {
		if _, err := directory.AddPushDevice(ctx, tx, tenant, person, "ios", fmt.Sprintf("push-%d", i)); err != nil && i < storage.MaxDevicesPerPerson-1 {
			t.Fatal(err)
		}
	}
	wantLimit(t, directory.AddWeather(ctx, tx, tenant, person, changes), storage.MaxWeatherPerPerson)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	in := func(fn func(tx *sqlx.Tx) error) error { return db.InTx(ctx, fn) }

	// The same number of app devices, another token, and none.
	for _, apps := range [][]directory.MobileApp{apps, {{InstallationID: "2", Platform: "ios", PushToken: "app-2"}}, nil} {
		if err := in(func(tx *sqlx.Tx) error {
			return directory.UpdateUser(ctx, tx, tenant, person, directory.NewUser{}, apps, true)
		}); err != nil {
			t.Fatalf("apps %v: %v", apps, err)
		}
	}
	wantLimit(t, in(func(tx *sqlx.Tx) error {
		return directory.UpdateUser(ctx, tx, tenant, person, directory.NewUser{}, append(apps, directory.MobileApp{InstallationID: "3", Platform: "ios", PushToken: "app-3"}), true)
	}), storage.MaxDevicesPerPerson)

	if err := in(func(tx *sqlx.Tx) error {
		return directory.AddWeather(ctx, tx, tenant, person, []directory.WeatherChange{{Category: "c0", Channels: []string{"Text"}}})
	}); err != nil {
		t.Fatalf("merge a channel: %v", err)
	}
	wantLimit(t, in(func(tx *sqlx.Tx) error {
		return directory.AddWeather(ctx, tx, tenant, person, []directory.WeatherChange{{Category: "c0", Channels: []string{"Fax"}}, {Category: "new", Channels: []string{"Email"}}})
	}), storage.MaxWeatherPerPerson)
	ci, err := directory.ContactInformation(ctx, db, tenant, person)
	if err != nil {
		t.Fatal(err)
	}
	weather, err := directory.ListWeather(ctx, db, tenant, person)
	if err != nil {
		t.Fatal(err)
	}
	if len(ci.Devices) != storage.MaxDevicesPerPerson || len(weather) != storage.MaxWeatherPerPerson+1 || len(weather[0].Channels) != 2 {
		t.Fatalf("%d devices, %d weather subscriptions (the first with %v)", len(ci.Devices), len(weather), weather[0].Channels)
	}
}
