package storagetest_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestPersonRowsAndStoredCodesAreCountedPerTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	person := func(tn string) int64 {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO people (tenant_id, directory_id, first_name) VALUES ($1, 'staff', 'P') RETURNING id`, tn); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO person_emails (tenant_id, person_id, address) VALUES ($1, $2, 'p@example.com')`, tn, id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	p, o := person(tenant), person(other)
	for _, v := range []struct {
		tenant  string
		person  int64
		kind    string
		status  string
		hash    any
		testing any
	}{
		{tenant, p, "email", "Pending", []byte{1}, nil},
		{tenant, p, "phone", "Pending", []byte{1}, "123456"},
		{other, o, "email", "Pending", []byte{1}, "654321"},
	} {
		if _, err := db.ExecContext(ctx, `INSERT INTO directory_verifications (tenant_id, person_id, kind, address, status, code_hash, testing_code)
			VALUES ($1, $2, $3, 'a', $4, $5, $6)`, v.tenant, v.person, v.kind, v.status, v.hash, v.testing); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := storagetest.PersonRowCounts(ctx, db, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if rows["people"] != 1 || rows["person_emails"] != 1 || rows["directory_verifications"] != 2 || rows["person_phones"] != 0 || len(rows) != 9 {
		t.Fatalf("rows %v", rows)
	}
	codes, err := storagetest.CountStoredCodes(ctx, db, tenant, directory.KindPhone)
	if err != nil || codes != (storagetest.StoredCodes{Plain: 1, HashedPending: 1}) {
		t.Fatalf("codes %+v (%v)", codes, err)
	}
	codes, err = storagetest.CountStoredCodes(ctx, db, tenant, directory.KindEmail)
	if err != nil || codes != (storagetest.StoredCodes{Plain: 0, HashedPending: 1}) {
		t.Fatalf("codes %+v (%v)", codes, err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM people WHERE id = $1`, p); err != nil {
		t.Fatal(err)
	}
	rows, err = storagetest.PersonRowCounts(ctx, db, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for table, n := range rows {
		if n != 0 {
			t.Errorf("%d rows left in %s", n, table)
		}
	}
	if codes, err := storagetest.CountStoredCodes(ctx, db, other, directory.KindEmail); err != nil || codes != (storagetest.StoredCodes{Plain: 1, HashedPending: 1}) {
		t.Fatalf("other tenant's codes %+v (%v)", codes, err)
	}
}
