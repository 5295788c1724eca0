package storagetest_test

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/files"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestUploadClaimsAreTheTenants(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := files.New(db, nil)
	for _, c := range []struct {
		tenant, prefix string
		life           time.Duration
	}{{tenant, "b/", time.Hour}, {tenant, "a/", -time.Second}, {other, "c/", time.Hour}} {
		if err := s.Claim(ctx, files.UploadClaim{Tenant: c.tenant, Prefix: c.prefix, WorkflowID: "wf-" + c.prefix}, c.life); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := storagetest.UploadClaims(ctx, db, tenant)
	if err != nil || len(cs) != 2 || cs[0] != (storagetest.UploadClaim{Prefix: "a/", WorkflowID: "wf-a/", Expired: true}) ||
		cs[1] != (storagetest.UploadClaim{Prefix: "b/", WorkflowID: "wf-b/"}) {
		t.Fatalf("%+v, %v", cs, err)
	}
}
