package storage_test

import (
	"slices"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestMissingDirectoryUsersAreTenantScoped(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var ids []int64
	for _, p := range []struct{ tenant, dir string }{{tenant, "staff"}, {tenant, "guests"}, {other, "staff"}} {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO people (tenant_id, directory_id) VALUES ($1, $2) RETURNING id`, p.tenant, p.dir); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	missing, err := storage.MissingDirectoryUsers(ctx, db, tenant, "staff", []int64{ids[2], ids[1], ids[0]})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{ids[1], ids[2]}; !slices.Equal(missing, want) {
		t.Fatalf("missing %v, want %v (another directory's and another tenant's user)", missing, want)
	}
}

func TestSmokeRunsAreTenantScoped(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	id := storagetest.NewSmokeRun(t, db, tenant, "smoke-1")
	if at, err := storage.SmokeRunCreatedAt(ctx, db, tenant, id); err != nil || at.IsZero() {
		t.Fatalf("created at %v, %v", at, err)
	}
	if _, err := storage.SmokeRunCreatedAt(ctx, db, other, id); err == nil {
		t.Fatalf("another tenant's smoke run: %v", err)
	}
}
