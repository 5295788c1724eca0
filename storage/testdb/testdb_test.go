package testdb_test

import (
	"context"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/testdb"
)

// TestDatabasesAreMigratedIsolatedAndDropped checks what every integration
// test relies on: a database of its own with every migration applied,
// invisible to other tests, gone once dropped.
func TestDatabasesAreMigratedIsolatedAndDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := stacktest.DB(t) // skips when the services are not there
	a, dropA, err := testdb.New(ctx, stacktest.DatabaseURL, stacktest.Suffix())
	if err != nil {
		t.Fatal(err)
	}
	b, dropB, err := testdb.New(ctx, stacktest.DatabaseURL, stacktest.Suffix())
	if err != nil {
		dropA()
		t.Fatal(err)
	}
	defer func() { _ = b.Close(); dropB() }()
	name, err := testdb.Name(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if other, _ := testdb.Name(ctx, b); other == name {
		t.Fatalf("two databases named %s", name)
	}
	var applied int
	if err := a.GetContext(ctx, &applied, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); err != nil || applied == 0 {
		t.Fatalf("no migration applied (%v)", err)
	}
	if _, err := a.ExecContext(ctx, `INSERT INTO people (tenant_id, first_name) VALUES ('1', 'only-in-a')`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.GetContext(ctx, &n, `SELECT count(*) FROM people`); err != nil || n != 0 {
		t.Fatalf("the other database sees %d people (%v)", n, err)
	}
	if ok, err := testdb.Exists(ctx, admin, name); err != nil || !ok {
		t.Fatalf("database %s missing (%v)", name, err)
	}
	_ = a.Close()
	dropA()
	if ok, err := testdb.Exists(ctx, admin, name); err != nil || ok {
		t.Fatalf("database %s still exists after it was dropped (%v)", name, err)
	}
}

// TestBinaryHoldsTheTurnWhileItUsesTheDatabase checks what lets make test
// run packages at once without taking more connections than PostgreSQL has:
// once a test binary has made a database, another process cannot take the
// turn until this one exits.
func TestBinaryHoldsTheTurnWhileItUsesTheDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stacktest.DB(t) // skips when the services are not there; takes the turn
	other, err := storage.Open(ctx, stacktest.DatabaseURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var took bool
	if err := other.GetContext(ctx, &took, `SELECT pg_try_advisory_lock($1)`, testdb.TurnKey); err != nil {
		t.Fatal(err)
	}
	if took {
		t.Fatal("another session took the turn while this test binary holds it")
	}
}
