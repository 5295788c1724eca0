package storage_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/storage"
)

// runMigrationUp runs the statement between StatementBegin and StatementEnd
// of the Up part of migration file (under migrations/) again, on rows a
// test wrote as versions before it left them.
func runMigrationUp(ctx context.Context, t *testing.T, db *storage.DB, file string) {
	t.Helper()
	b, err := os.ReadFile("migrations/" + file)
	if err != nil {
		t.Fatal(err)
	}
	_, up, _ := strings.Cut(string(b), "-- +goose StatementBegin")
	up, _, _ = strings.Cut(up, "-- +goose StatementEnd")
	if _, err := db.ExecContext(ctx, up); err != nil {
		t.Fatal(err)
	}
}
