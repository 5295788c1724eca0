package files_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/files"
)

// claimed returns the prefixes tenant has claims on, and how many of them
// have expired.
func claimed(t *testing.T, db *storage.DB, tenant string) (prefixes []string, expired int) {
	t.Helper()
	rows, err := db.QueryxContext(context.Background(), `SELECT object_prefix, expires_at < now() FROM upload_claims WHERE tenant_id = $1 ORDER BY object_prefix`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var e bool
		if err := rows.Scan(&p, &e); err != nil {
			t.Fatal(err)
		}
		prefixes = append(prefixes, p)
		if e {
			expired++
		}
	}
	return prefixes, expired
}

func claim(t *testing.T, s *files.Store, tenant, prefix string, life time.Duration) {
	t.Helper()
	if err := s.Claim(context.Background(), files.UploadClaim{Tenant: tenant, Prefix: prefix, WorkflowID: "file-" + tenant + "-" + prefix}, life); err != nil {
		t.Fatal(err)
	}
}

// Recording a file releases its upload's claim, and fails when the claim
// is gone; a sweep takes only expired claims, a bounded batch of them,
// deletes those it handled and postpones the others.
func TestUploadClaimsAreReleasedOrSwept(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := files.New(db, nil)

	recorded := newFile(tenant, "", "kept.png", "image")
	recorded.Claimed = true
	claim(t, s, tenant, recorded.ObjectPrefix, time.Hour)
	claim(t, s, tenant, "tenants/"+tenant+"/files/live/", time.Hour)
	if err := s.Create(ctx, recorded); err != nil {
		t.Fatal(err)
	}
	if p, _ := claimed(t, db, tenant); !slices.Equal(p, []string{"tenants/" + tenant + "/files/live/"}) {
		t.Fatalf("claims after the file was recorded: %v", p)
	}
	lost := newFile(tenant, "", "lost.png", "image")
	lost.Claimed = true
	if err := s.Create(ctx, lost); !errors.Is(err, files.ErrClaimLost) {
		t.Fatalf("recording a file whose claim is gone: %v", err)
	}
	if _, err := s.Get(ctx, tenant, "lost.png"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the file whose claim is gone was recorded: %v", err)
	}

	for _, p := range []string{"a/", "b/", "c/"} {
		claim(t, s, tenant, "tenants/"+tenant+"/files/"+p, -time.Minute)
	}
	claim(t, s, other, "tenants/"+other+"/files/x/", -time.Hour)
	var seen []files.UploadClaim
	deleted, kept, err := s.SweepClaims(ctx, 3, time.Hour, func(c files.UploadClaim) error {
		seen = append(seen, c)
		if c.Tenant == other {
			return errors.New("the object store is down")
		}
		return nil
	})
	if err != nil || deleted != 2 || kept != 1 || len(seen) != 3 {
		t.Fatalf("first sweep: %d deleted, %d kept, %+v, %v", deleted, kept, seen, err)
	}
	for _, c := range seen {
		if c.Tenant == tenant && c.Prefix == "tenants/"+tenant+"/files/live/" {
			t.Fatal("the sweep took a claim that has not expired")
		}
		if c.WorkflowID != "file-"+c.Tenant+"-"+c.Prefix || c.CreatedAt.IsZero() || !c.ExpiresAt.Before(time.Now()) {
			t.Fatalf("claim %+v", c)
		}
	}
	// The kept claim was postponed: the next sweep takes the one left.
	seen = nil
	deleted, kept, err = s.SweepClaims(ctx, 3, time.Hour, func(c files.UploadClaim) error { seen = append(seen, c); return nil })
	if err != nil || deleted != 1 || kept != 0 || len(seen) != 1 || seen[0].Tenant != tenant {
		t.Fatalf("second sweep: %d deleted, %d kept, %+v, %v", deleted, kept, seen, err)
	}
	if p, expired := claimed(t, db, tenant); !slices.Equal(p, []string{"tenants/" + tenant + "/files/live/"}) || expired != 0 {
		t.Fatalf("the tenant's claims after the sweeps: %v (%d expired)", p, expired)
	}
	if p, expired := claimed(t, db, other); len(p) != 1 || expired != 0 {
		t.Fatalf("the other tenant's claims: %v (%d expired)", p, expired)
	}
	if err := s.Release(ctx, tenant, "tenants/"+tenant+"/files/live/"); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, tenant, "tenants/"+tenant+"/files/live/"); err != nil {
		t.Fatalf("a second release: %v", err)
	}
	if p, _ := claimed(t, db, tenant); len(p) != 0 {
		t.Fatalf("claims after the release: %v", p)
	}
}

// An upload that records its file while a sweep holds its claim waits for
// the sweep, then fails: the file never refers to objects the sweep took.
func TestRecordingWaitsForTheSweepOfItsClaim(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	s := files.New(db, nil)
	late := newFile(tenant, "", "late.png", "image")
	late.Claimed = true
	claim(t, s, tenant, late.ObjectPrefix, -time.Second)
	recorded := make(chan error, 1)
	deleted, _, err := s.SweepClaims(ctx, 10, time.Hour, func(files.UploadClaim) error {
		go func() { recorded <- s.Create(ctx, late) }()
		time.Sleep(300 * time.Millisecond)
		if len(recorded) > 0 {
			t.Error("the file was recorded while the sweep held its claim")
		}
		return nil
	})
	if err != nil || deleted != 1 {
		t.Fatalf("sweep: %d deleted, %v", deleted, err)
	}
	if err := <-recorded; !errors.Is(err, files.ErrClaimLost) {
		t.Fatalf("recording after the sweep: %v", err)
	}
	if _, err := s.Get(ctx, tenant, "late.png"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the file was recorded: %v", err)
	}
}
