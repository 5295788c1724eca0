package directory_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/directory"
)

// TestRemovingAnAddressWhileItsCodeIsStoredNeverDeadlocks races the two
// writers of an address and its verification: the workflow storing a code
// (or settling it) and the user removing the address or the whole user.
// Both must finish: the one that comes second either finds nothing or
// waits.
func TestRemovingAnAddressWhileItsCodeIsStoredNeverDeadlocks(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	const address = "race@example.com"
	for i := range 100 {
		var person int64
		var seq int
		err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			var err error
			if person, err = directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{}); err != nil {
				return err
			}
			if _, err = directory.AddEmail(ctx, tx, tenant, person, address, "work"); err != nil {
				return err
			}
			if _, err = directory.ReserveNonce(ctx, tx, tenant, person, directory.KindEmail, address, "n", []byte{byte(i), byte(i >> 8)}); err != nil {
				return err
			}
			seq, err = directory.BeginResend(ctx, tx, tenant, person, directory.KindEmail, address, "n", "wf")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		code := directory.Code{Tenant: tenant, Person: person, Kind: directory.KindEmail, Address: address, Seq: seq,
			Salt: []byte("s"), Hash: []byte("h"), TTL: time.Minute}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		wg.Go(func() { _, errs[0] = directory.StoreCode(ctx, db, code) })
		wg.Go(func() {
			errs[1] = directory.FailCode(ctx, db, tenant, person, directory.KindEmail, address, seq, "undeliverable")
		})
		wg.Go(func() {
			if i%2 == 0 {
				// As the API does: the user's row locked first.
				errs[2] = db.InTx(ctx, func(tx *sqlx.Tx) error {
					if _, err := directory.LockUser(ctx, tx, tenant, "main", person); err != nil {
						return err
					}
					return directory.RemoveEmail(ctx, tx, tenant, person, address)
				})
			} else {
				errs[2] = directory.DeleteUser(ctx, db, tenant, "main", person)
			}
		})
		wg.Wait()
		for _, err := range errs {
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("round %d: %v", i, err)
			}
		}
		if _, err := directory.ContactStatus(context.Background(), db, tenant, person, directory.KindEmail, address); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("round %d: address still there after its removal: %v", i, err)
		}
	}
}

// TestAResendDoesNotUndoAVerification: a code checked after a resend began
// and before its code was stored verifies the address; the resend's code
// is then not stored (nothing is sent) and the address stays Verified.
func TestAResendDoesNotUndoAVerification(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	const address = "first@example.com"
	var person int64
	resend := func(nonce string) int {
		t.Helper()
		var seq int
		err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			var err error
			if person == 0 {
				if person, err = directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{}); err != nil {
					return err
				}
				if _, err = directory.AddEmail(ctx, tx, tenant, person, address, "work"); err != nil {
					return err
				}
			}
			if _, err = directory.ReserveNonce(ctx, tx, tenant, person, directory.KindEmail, address, nonce, []byte(nonce)); err != nil {
				return err
			}
			seq, err = directory.BeginResend(ctx, tx, tenant, person, directory.KindEmail, address, nonce, "wf")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	codeKey, err := directory.CodeKey(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	store := func(seq int, code string) directory.StoredCode {
		t.Helper()
		salt := []byte("salt")
		out, err := directory.StoreCode(ctx, db, directory.Code{Tenant: tenant, Person: person, Kind: directory.KindEmail, Address: address,
			Seq: seq, Salt: salt, Hash: directory.HashCode(codeKey, salt, code), TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if !store(resend("n1"), "111111").Stored {
		t.Fatal("the first code was not stored")
	}
	second := resend("n2")
	var res directory.CheckResult
	if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		res, err = directory.CheckCode(ctx, tx, codeKey, tenant, person, directory.KindEmail, address, "111111")
		return err
	}); err != nil || res.Outcome != directory.CheckVerified {
		t.Fatalf("check: %+v %v", res, err)
	}
	if store(second, "222222").Stored {
		t.Error("the resend's code was stored after the address was verified")
	}
	if st, err := directory.ContactStatus(ctx, db, tenant, person, directory.KindEmail, address); err != nil || st != storage.VerificationVerified {
		t.Fatalf("status %s %v, want Verified", st, err)
	}
}

// TestACodeStoredBeforeTheKeyStillVerifies: during a rolling upgrade a
// worker of the version before the keyed hash stores a code as the plain
// SHA-256 of salt and code; the API checking it under the key still takes
// the right code, and counts a wrong one as wrong.
func TestACodeStoredBeforeTheKeyStillVerifies(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	const address = "upgrade@example.com"
	var person int64
	var seq int
	if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if person, err = directory.CreateUser(ctx, tx, tenant, "main", directory.NewUser{}); err != nil {
			return err
		}
		if _, err = directory.AddEmail(ctx, tx, tenant, person, address, "work"); err != nil {
			return err
		}
		if _, err = directory.ReserveNonce(ctx, tx, tenant, person, directory.KindEmail, address, "n", []byte("n")); err != nil {
			return err
		}
		seq, err = directory.BeginResend(ctx, tx, tenant, person, directory.KindEmail, address, "n", "wf")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	salt := []byte("salt of an older version")
	plain := sha256.Sum256(append(salt, "314159"...))
	if out, err := directory.StoreCode(ctx, db, directory.Code{Tenant: tenant, Person: person, Kind: directory.KindEmail, Address: address,
		Seq: seq, Salt: salt, Hash: plain[:], TTL: time.Minute}); err != nil || !out.Stored {
		t.Fatalf("store: %+v %v", out, err)
	}
	key, err := directory.CodeKey(secrets.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	check := func(code string) directory.CheckResult {
		t.Helper()
		var res directory.CheckResult
		if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			var err error
			res, err = directory.CheckCode(ctx, tx, key, tenant, person, directory.KindEmail, address, code)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := check("271828"); res.Outcome != directory.CheckWrong {
		t.Fatalf("a wrong code: %+v", res)
	}
	if res := check("314159"); res.Outcome != directory.CheckVerified {
		t.Fatalf("the code stored before the key: %+v, want Verified", res)
	}
	if st, err := directory.ContactStatus(ctx, db, tenant, person, directory.KindEmail, address); err != nil || st != storage.VerificationVerified {
		t.Fatalf("status %s %v, want Verified", st, err)
	}
}
