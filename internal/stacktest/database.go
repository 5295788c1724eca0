package stacktest

import (
	"context"
	"fmt"
	"testing"

	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/testdb"
)

// DB returns a migrated database of its own, dropped when the test ends.
// It is a copy of a template database migrated once (storage/testdb).
func DB(t testing.TB) *storage.DB {
	t.Helper()
	needServices(t)
	db, drop, err := newDatabase(context.Background())
	if err != nil {
		t.Fatalf("test database: %v", err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		drop()
	})
	return db
}

// DBTenants returns what a storage test starts with: the test's context, a
// database of its own (DB) and two fresh tenant ids (NewTenant), the second
// for checking that the first tenant's rows stay its own.
func DBTenants(t testing.TB) (ctx context.Context, db *storage.DB, tenant, other string) {
	t.Helper()
	return t.Context(), DB(t), NewTenant(), NewTenant()
}

// newDatabase creates a database from the migrated template and returns it
// with the function that drops it.
func newDatabase(ctx context.Context) (*storage.DB, func(), error) {
	db, drop, err := testdb.New(ctx, DatabaseURL, Suffix())
	if err != nil {
		return nil, nil, fmt.Errorf("%w (run make test, which starts what tests need)", err)
	}
	return db, drop, nil
}
