package testdb_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

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

// TestABinaryWaitingForTheTurnHoldsNoConnection: the binaries that wait
// for the turn (as many as go test runs at once, less one) do not each
// hold one of the connections that the binary whose turn it is needs.
func TestABinaryWaitingForTheTurnHoldsNoConnection(t *testing.T) {
	t.Parallel()
	stacktest.DB(t) // this binary takes the turn
	name := "tocsin-turn-" + stacktest.Suffix()
	u, err := url.Parse(stacktest.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- testdb.AwaitTurnApart(ctx, u.String()) }()

	observer, err := storage.Open(context.Background(), stacktest.DatabaseURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer observer.Close()
	var held []int
	for range 10 {
		time.Sleep(150 * time.Millisecond)
		var n int
		if err := observer.GetContext(context.Background(), &n, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, name); err != nil {
			t.Fatal(err)
		}
		held = append(held, n)
	}
	if err := <-waited; err == nil {
		t.Fatal("another binary took the turn this one holds")
	}
	if !slices.Contains(held, 0) {
		t.Fatalf("the waiting binary's connections, looked at every 150 ms: %v; want it to hold none most of the time", held)
	}
}
