package channelstate_test

import (
	"errors"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestDeletingAListWhileItIsReplacedRemovesIt: a delete that comes while
// an import replaces the list waits for it and removes what it leaves; it
// does not answer that the list is missing (it existed all along).
func TestDeletingAListWhileItIsReplacedRemovesIt(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	pts := &channelstate.AddressPoints{DB: db}
	one := func(yield func(channelstate.AddressPoint, error) bool) {
		yield(channelstate.AddressPoint{Phone: "+15550000001", Latitude: 45, Longitude: -122}, nil)
	}
	if _, err := pts.Replace(ctx, tenant, "wells", one); err != nil {
		t.Fatal(err)
	}
	// An import at its last step: it holds the list's lock, has removed
	// the old points and written the new ones, and has not committed.
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`SELECT pg_advisory_xact_lock(hashtextextended($1 || E'\n' || 'wells', 11))`,
		`DELETE FROM etn_address_points WHERE tenant_id = $1 AND list_name = 'wells'`,
		`INSERT INTO etn_address_points (tenant_id, list_name, external_id, name, address, phone, latitude, longitude)
			VALUES ($1, 'wells', '', '', '', '+15550000002', 45, -122)`,
	} {
		if _, err := tx.ExecContext(ctx, q, tenant); err != nil {
			t.Fatal(err)
		}
	}
	deleted := make(chan error, 1)
	go func() { deleted <- pts.Delete(ctx, tenant, "wells") }()
	// The delete waits on a lock (the test has its own database).
	storagetest.WaitBlocked(t, db, "")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("delete during an import: %v", err)
	}
	if lists, _, err := pts.Lists(ctx, tenant, "", 500, 0); err != nil || len(lists) != 0 {
		t.Fatalf("lists after the delete: %+v %v", lists, err)
	}
	if err := pts.Delete(ctx, tenant, "wells"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
