package directory_test

import (
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestPruneNoncesRemovesOldRowsOfEveryTenant: nonces and rate-limit counts
// older than NonceRetention go, whichever tenant and address they belong
// to and whether or not it reserves again; younger ones stay. Each call
// deletes at most its limit of each table.
func TestPruneNoncesRemovesOldRowsOfEveryTenant(t *testing.T) {
	t.Parallel()
	ctx, db, _, _ := stacktest.DBTenants(t)
	// Each tenant reserves two nonces for each address, and the rows are
	// aged after each address: old@ ends an hour past the retention,
	// recent@ an hour short of it, new@ as it was reserved.
	steps := []struct {
		address string
		then    time.Duration
	}{
		{"old@example.com", 2 * time.Hour},
		{"recent@example.com", directory.NonceRetention - time.Hour},
		{"new@example.com", 0},
	}
	tenants := []string{stacktest.NewTenant(), stacktest.NewTenant(), stacktest.NewTenant()}
	for _, tenant := range tenants {
		err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			person, err := directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{})
			if err != nil {
				return err
			}
			for _, s := range steps {
				if _, err := directory.AddEmail(ctx, tx, tenant, person, s.address, "work"); err != nil {
					return err
				}
				for _, nonce := range []string{"nonce-one", "nonce-two"} {
					if _, err := directory.ReserveNonce(ctx, tx, tenant, person, directory.KindEmail, s.address, nonce, []byte(s.address)); err != nil {
						return err
					}
				}
				if err := storagetest.AgeNonces(ctx, tx, tenant, s.then); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Two old rows of each table for each of three tenants: 6, in batches of 4.
	for i, want := range []int64{4, 2, 0} {
		got, err := directory.PruneNonces(ctx, db, 4)
		if err != nil || got != (directory.PrunedNonces{Nonces: want, Counts: want}) {
			t.Fatalf("prune %d: %+v, want %d of each (%v)", i+1, got, want, err)
		}
	}
	for _, tenant := range tenants {
		for _, s := range steps {
			want := 2
			if s.address == "old@example.com" {
				want = 0
			}
			if nonces, counts := rows(t, db, tenant, s.address); nonces != want || counts != want {
				t.Errorf("tenant %s, %s: %d nonces and %d counts left, want %d of each", tenant, s.address, nonces, counts, want)
			}
		}
	}
}

// rows counts the nonces and rate-limit counts of an address of the tenant.
func rows(t *testing.T, db *storage.DB, tenant, address string) (nonces, counts int) {
	t.Helper()
	err := db.GetContext(t.Context(), &nonces, `SELECT count(*) FROM directory_verification_nonces WHERE tenant_id = $1 AND address = $2`, tenant, address)
	if err == nil {
		err = db.GetContext(t.Context(), &counts, `SELECT count(*) FROM directory_nonce_window WHERE tenant_id = $1 AND address_hash = $2`, tenant, []byte(address))
	}
	if err != nil {
		t.Fatal(err)
	}
	return nonces, counts
}
