package storage_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestNamesMigrateToNFC: the migration that puts stored names in NFC
// renames each name that is not; where the NFC name is taken, by a name
// stored so or by an earlier of two spellings, the other gets its id (an
// address-point list its import time), so both stay apart and reachable.
// Names whose NFC form is free stay exactly that form, and other tenants'
// names are not compared.
func TestNamesMigrateToNFC(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	const nfc, nfd, sign = "\u00C5sa", "A\u030Asa", "\u212Bsa" // Åsa, composed, decomposed, with the Ångström sign
	one := func(query string, args ...any) int64 {
		t.Helper()
		var id int64
		if err := db.GetContext(ctx, &id, query, args...); err != nil {
			t.Fatal(err)
		}
		return id
	}
	group := func(tn, name string) int64 {
		return one(`INSERT INTO groups (tenant_id, name) VALUES ($1, $2) RETURNING id`, tn, name)
	}
	list := func(tn, name string) int64 {
		return one(`INSERT INTO distribution_lists (tenant_id, name) VALUES ($1, $2) RETURNING id`, tn, name)
	}
	person := func(tn string, dir, ext any, first string, roles []string) int64 {
		if roles == nil {
			roles = []string{}
		}
		return one(`INSERT INTO people (tenant_id, directory_id, external_id, first_name, middle_name, last_name, roles)
			VALUES ($1, $2, $3, $4, $4, $4, $5) RETURNING id`, tn, dir, ext, first, pq.StringArray(roles))
	}
	pointList := func(tn, name string, at time.Time) {
		if _, err := db.ExecContext(ctx, `INSERT INTO etn_address_point_lists (tenant_id, list_name, points, imported_at) VALUES ($1, $2, 1, $3)`, tn, name, at); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO etn_address_points (tenant_id, list_name, phone, latitude, longitude) VALUES ($1, $2, '+15550000001', 1, 2)`, tn, name); err != nil {
			t.Fatal(err)
		}
	}

	gAlone, gTaken, gClash, gFirst, gSecond := group(other, nfd), group(tenant, nfc), group(tenant, nfd), group(tenant+"x", nfd), group(tenant+"x", sign)
	lAlone, lTaken, lClash := list(other, sign), list(tenant, nfc), list(tenant, nfd)
	at := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
	pointList(other, nfd, at)
	pointList(tenant, nfc, at)
	pointList(tenant, nfd, at)
	pAlone := person(other, nfd, nfd, nfd, []string{nfd, "Warden", sign})
	pTaken := person(tenant, nfc, nfc, nfc, nil)
	pClash := person(tenant, nfc, nfd, nfc, nil)
	pDirClash := person(tenant, nfd, nfc, nfc, nil)
	pPlain := person(tenant, nil, nfd, nfc, nil) // a plain contact: no directory
	loc := one(`INSERT INTO person_locations (tenant_id, person_id, name, latitude, longitude) VALUES ($1, $2, $3, 1, 2) RETURNING id`, tenant, pPlain, nfd)

	runMigrationUp(ctx, t, db, "00610_names_nfc.sql")

	named := func(query string, id int64) string {
		t.Helper()
		var s string
		if err := db.GetContext(ctx, &s, query, id); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for id, want := range map[int64]string{gAlone: nfc, gTaken: nfc, gClash: fmt.Sprintf("%s (%d)", nfc, gClash), gFirst: nfc, gSecond: fmt.Sprintf("%s (%d)", nfc, gSecond)} {
		if got := named(`SELECT name FROM groups WHERE id = $1`, id); got != want {
			t.Errorf("group %d is %q, want %q", id, got, want)
		}
	}
	for id, want := range map[int64]string{lAlone: nfc, lTaken: nfc, lClash: fmt.Sprintf("%s (%d)", nfc, lClash)} {
		if got := named(`SELECT name FROM distribution_lists WHERE id = $1`, id); got != want {
			t.Errorf("list %d is %q, want %q", id, got, want)
		}
	}
	for tn, want := range map[string][]string{other: {nfc}, tenant: {nfc, nfc + " (2026-03-04 05:06:07.890000)"}} {
		var lists, points []string
		if err := db.SelectContext(ctx, &lists, `SELECT list_name FROM etn_address_point_lists WHERE tenant_id = $1 ORDER BY list_name`, tn); err != nil {
			t.Fatal(err)
		}
		if err := db.SelectContext(ctx, &points, `SELECT list_name FROM etn_address_points WHERE tenant_id = $1 ORDER BY list_name`, tn); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(lists) != fmt.Sprint(want) || fmt.Sprint(points) != fmt.Sprint(want) {
			t.Errorf("tenant %s: address-point lists %q, their points' %q, want %q", tn, lists, points, want)
		}
	}
	type row struct {
		Dir, Ext, First, Middle, Last string
		Roles                         pq.StringArray
	}
	for id, want := range map[int64]row{
		pAlone:    {nfc, nfc, nfc, nfc, nfc, pq.StringArray{nfc, "Warden"}},
		pTaken:    {nfc, nfc, nfc, nfc, nfc, pq.StringArray{}},
		pClash:    {nfc, fmt.Sprintf("%s (%d)", nfc, pClash), nfc, nfc, nfc, pq.StringArray{}},
		pDirClash: {nfc, fmt.Sprintf("%s (%d)", nfc, pDirClash), nfc, nfc, nfc, pq.StringArray{}},
		pPlain:    {"", nfc, nfc, nfc, nfc, pq.StringArray{}},
	} {
		var got row
		if err := db.QueryRowxContext(ctx, `SELECT coalesce(directory_id, ''), external_id, first_name, middle_name, last_name, roles FROM people WHERE id = $1`, id).
			Scan(&got.Dir, &got.Ext, &got.First, &got.Middle, &got.Last, &got.Roles); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("person %d is %q, want %q", id, got, want)
		}
	}
	if got := named(`SELECT name FROM person_locations WHERE id = $1`, loc); got != nfc {
		t.Errorf("location %q", got)
	}
}
