package storagetest_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestPhoneCountIsTheTenants(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	for tn, phones := range map[string]int{tenant: 3, other: 1} {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO people (tenant_id, first_name) VALUES ($1, 'P') RETURNING id`, tn); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO person_phones (tenant_id, person_id, number)
			SELECT $1, $2, '+1555000000' || i FROM generate_series(1, $3::int) AS i`, tn, id, phones); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := storagetest.PhoneCount(ctx, db, tenant); err != nil || n != 3 {
		t.Fatalf("%d phones (%v)", n, err)
	}
	if n, err := storagetest.PhoneCount(ctx, db, stacktest.NewTenant()); err != nil || n != 0 {
		t.Fatalf("a tenant without contacts has %d phones (%v)", n, err)
	}
}
