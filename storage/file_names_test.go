package storage_test

import (
	"fmt"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestFileNamesMigrateToNFC: the migration that puts stored file names in
// NFC renames a file whose name is not, and, when the tenant already has a
// file of the NFC name, gives it its id as well, so both stay reachable.
func TestFileNamesMigrateToNFC(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	const nfc, nfd = "\u00C4rger.png", "A\u0308rger.png"
	insert := func(tenant, name string) int64 {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO files (tenant_id, full_name, folder_name, file_name, kind, content_type, size_bytes, sha256, object_prefix)
			VALUES ($1, $2, $3, $4, 'image', 'image/png', 1, '', '') RETURNING id`, tenant, "odd/"+name, "odd", name); err != nil {
			t.Fatal(err)
		}
		return id
	}
	alone := insert(tenant, nfd)
	taken, clash := insert(other, nfc), insert(other, nfd)

	runMigrationUp(ctx, t, db, "00204_file_names_nfc.sql")
	for id, want := range map[int64]string{alone: nfc, taken: nfc, clash: fmt.Sprintf("\u00C4rger (%d).png", clash)} {
		var full, file string
		if err := db.QueryRowxContext(ctx, `SELECT full_name, file_name FROM files WHERE id = $1`, id).Scan(&full, &file); err != nil {
			t.Fatal(err)
		}
		if full != "odd/"+want || file != want {
			t.Errorf("file %d is %q (%q), want odd/%q", id, full, file, want)
		}
	}
}
