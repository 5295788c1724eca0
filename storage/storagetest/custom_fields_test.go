package storagetest_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestCustomFieldsAreTheTenants(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var person int64
	if err := db.GetContext(ctx, &person, `INSERT INTO people (tenant_id, first_name, custom_fields) VALUES ($1, 'P', '{"a":"1"}') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	if err := storagetest.AddCustomFields(ctx, db, other, person, map[string]string{"b": "2"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's contact: %v", err)
	}
	if err := storagetest.AddCustomFields(ctx, db, tenant, person, map[string]string{"b": "2"}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := db.SelectContext(ctx, &keys, `SELECT key FROM custom_field_keys WHERE tenant_id = $1 ORDER BY key`, tenant); err != nil || !reflect.DeepEqual(keys, []string{"b"}) {
		t.Fatalf("keys listed %v (%v)", keys, err)
	}

	al := storagetest.NewAlert(t, db, tenant)
	theirs := storagetest.NewAlert(t, db, other)
	if _, err := db.ExecContext(ctx, `INSERT INTO alert_recipients (tenant_id, alert_id, seq, custom_fields)
		VALUES ($1, $2, 1, '{"a":"1"}'), ($1, $2, 2, NULL), ($3, $4, 1, '{"c":"3"}')`, tenant, al, other, theirs); err != nil {
		t.Fatal(err)
	}
	got, err := storagetest.RecipientCustomFields(ctx, db, tenant, al)
	if err != nil || !reflect.DeepEqual(got, map[int64]map[string]string{1: {"a": "1"}}) {
		t.Fatalf("recipients' custom fields %v (%v)", got, err)
	}
	if none, err := storagetest.RecipientCustomFields(ctx, db, tenant, theirs); err != nil || len(none) != 0 {
		t.Fatalf("another tenant's alert: %v (%v)", none, err)
	}
}
