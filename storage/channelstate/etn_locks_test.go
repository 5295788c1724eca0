package channelstate_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

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
		`UPDATE etn_address_point_lists SET points = 1, imported_at = now() WHERE tenant_id = $1 AND list_name = 'wells'`,
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

// TestListingAddressPointListsReadsNoPoint: the listing of a tenant's
// address-point lists says how many points each has and when it was
// imported as imports and deletes leave them, and it reads a row per list,
// not the points: it answers while the points are locked, as they are
// while a very large list is read.
func TestListingAddressPointListsReadsNoPoint(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	pts := &channelstate.AddressPoints{DB: db}
	points := func(n int) iter.Seq2[channelstate.AddressPoint, error] {
		return func(yield func(channelstate.AddressPoint, error) bool) {
			for i := range n {
				if !yield(channelstate.AddressPoint{Phone: fmt.Sprintf("+1555%07d", i), Latitude: 45, Longitude: -122}, nil) {
					return
				}
			}
		}
	}
	for _, l := range []struct {
		tenant, name string
		points       int
	}{{tenant, "wells", 3}, {tenant, "farms", 2}, {other, "mills", 4}, {tenant, "wells", 5}, {tenant, "barns", 1}} {
		if _, err := pts.Replace(ctx, l.tenant, l.name, points(l.points)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pts.Delete(ctx, tenant, "barns"); err != nil {
		t.Fatal(err)
	}
	var imported map[string]time.Time
	if err := func() error {
		rows, err := db.QueryxContext(ctx, `SELECT list_name, max(created_at) FROM etn_address_points WHERE tenant_id = $1 GROUP BY list_name`, tenant)
		if err != nil {
			return err
		}
		defer rows.Close()
		imported = map[string]time.Time{}
		for rows.Next() {
			var name string
			var at time.Time
			if err := rows.Scan(&name, &at); err != nil {
				return err
			}
			imported[name] = at
		}
		return rows.Err()
	}(); err != nil {
		t.Fatal(err)
	}

	lock, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, `LOCK TABLE etn_address_points IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	waitAtMost, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lists, total, err := pts.Lists(waitAtMost, tenant, "points DESC, list_name", 500, 0)
	if err != nil || total != storage.ExactTotal(2) || len(lists) != 2 {
		t.Fatalf("lists while the points are locked: %+v of %+v, %v", lists, total, err)
	}
	for i, want := range []struct {
		name   string
		points int
	}{{"wells", 5}, {"farms", 2}} {
		if l := lists[i]; l.Name != want.name || l.Points != want.points || !l.ImportedAt.Equal(imported[want.name]) {
			t.Errorf("list %d: %+v, want %s with %d points imported at %s", i, l, want.name, want.points, imported[want.name])
		}
	}
}
