package channelstate_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestRemovingRefusedTokensWhileTheirUserIsRemovedNeverDeadlocks races the
// two writers of a person's devices: the push channel forgetting tokens the
// push service refused, and the removal of the person with its devices.
// The tokens' order is not the order the person's devices were added in,
// and a reader holding another person's device lines the two up so that
// each holds a device the other wants next, unless both take the person
// first. Both must finish.
func TestRemovingRefusedTokensWhileTheirUserIsRemovedNeverDeadlocks(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	var ada, bea int64
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if ada, err = directory.CreateUser(ctx, tx, tenant, "", directory.NewUser{}); err != nil {
			return err
		}
		if bea, err = directory.CreateUser(ctx, tx, tenant, "", directory.NewUser{}); err != nil {
			return err
		}
		for _, d := range []struct {
			person int64
			token  string
		}{{ada, "tok-c"}, {ada, "tok-a"}, {bea, "tok-b"}} {
			if _, err := directory.AddPushDevice(ctx, tx, tenant, d.person, "ios", d.token); err != nil {
				return err
			}
		}
		// A tenant with many devices: the tokens are looked up by their
		// index, in the tokens' order.
		_, err = tx.ExecContext(ctx, `INSERT INTO person_devices (tenant_id, person_id, app, token)
			SELECT $1, $2, 'push', 'bulk-' || g FROM generate_series(1, 5000) g`, tenant, bea)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE person_devices`); err != nil {
		t.Fatal(err)
	}

	hold, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback() }()
	if _, err := hold.ExecContext(ctx, `SELECT 1 FROM person_devices WHERE tenant_id = $1 AND token = 'tok-b' FOR UPDATE`, tenant); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var removed, deleted error
	wg.Go(func() {
		removed = (&channelstate.Devices{DB: db}).Remove(ctx, tenant, "push", []string{"tok-a", "tok-b", "tok-c"})
	})
	storagetest.WaitBlocked(t, db, "token = ANY")
	wg.Go(func() { deleted = directory.DeleteUser(ctx, db, tenant, "", ada) })
	storagetest.WaitBlocked(t, db, "people WHERE tenant_id = $1 AND directory_id")
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if removed != nil || deleted != nil {
		t.Fatalf("remove tokens: %v; delete user: %v", removed, deleted)
	}
	if _, err := directory.GetUser(ctx, db, tenant, "", ada); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the user is still there: %v", err)
	}
	ci, err := directory.ContactInformation(ctx, db, tenant, bea)
	if err != nil || len(ci.Devices) != 5000 {
		t.Fatalf("the other user has %d devices, want 5000 (%v)", len(ci.Devices), err)
	}
}
