package stacktest

import (
	"context"
	"testing"
)

// TestDBIsMigratedIsolatedAndDropped checks what every integration test relies
// on: a database of its own with every migration applied, invisible to other
// tests, gone once the test ends.
func TestDBIsMigratedIsolatedAndDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var name string
	t.Run("own", func(t *testing.T) {
		a, b := DB(t), DB(t)
		if err := a.GetContext(ctx, &name, `SELECT current_database()`); err != nil {
			t.Fatal(err)
		}
		var other string
		if err := b.GetContext(ctx, &other, `SELECT current_database()`); err != nil {
			t.Fatal(err)
		}
		if name == other {
			t.Fatalf("two tests share database %s", name)
		}
		var applied int
		if err := a.GetContext(ctx, &applied, `SELECT count(*) FROM goose_db_version WHERE version_id > 0`); err != nil {
			t.Fatal(err)
		}
		if applied == 0 {
			t.Fatal("no migration applied")
		}
		if _, err := a.ExecContext(ctx, `INSERT INTO people (tenant_id, first_name) VALUES ('1', 'only-in-a')`); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := b.GetContext(ctx, &n, `SELECT count(*) FROM people`); err != nil || n != 0 {
			t.Fatalf("the other database sees %d people (%v)", n, err)
		}
	})
	admin := DB(t)
	var left int
	if err := admin.GetContext(ctx, &left, `SELECT count(*) FROM pg_database WHERE datname = $1`, name); err != nil || left != 0 {
		t.Fatalf("database %s still exists after its test (%v)", name, err)
	}
}
