package storagetest_test

import (
	"errors"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestStorePersonLocaleWritesTheTenantsPerson(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var id int64
	if err := db.GetContext(ctx, &id, `INSERT INTO people (tenant_id, first_name) VALUES ($1, 'P') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	if err := storagetest.StorePersonLocale(ctx, db, other, id, "xx", "Local"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's person: %v", err)
	}
	if err := storagetest.StorePersonLocale(ctx, db, tenant, id, "xx", "Local"); err != nil {
		t.Fatal(err)
	}
	var lang, zone string
	if err := db.QueryRowContext(ctx, `SELECT language, time_zone FROM people WHERE id = $1`, id).Scan(&lang, &zone); err != nil || lang != "xx" || zone != "Local" {
		t.Fatalf("%q, %q (%v)", lang, zone, err)
	}
}

func TestStorePersonNameWritesTheTenantsPerson(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var id int64
	if err := db.GetContext(ctx, &id, `INSERT INTO people (tenant_id, first_name) VALUES ($1, 'P') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	if err := storagetest.StorePersonName(ctx, db, other, id, "\u202eA", "", "B"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's person: %v", err)
	}
	if err := storagetest.StorePersonName(ctx, db, tenant, id, "\u202eA", "M\u200b", "B"); err != nil {
		t.Fatal(err)
	}
	var first, middle, last string
	if err := db.QueryRowContext(ctx, `SELECT first_name, middle_name, last_name FROM people WHERE id = $1`, id).Scan(&first, &middle, &last); err != nil ||
		first != "\u202eA" || middle != "M\u200b" || last != "B" {
		t.Fatalf("%q, %q, %q (%v)", first, middle, last, err)
	}
}
