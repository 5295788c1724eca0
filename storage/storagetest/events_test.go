package storagetest_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestTenantEventsAreTheTenantsInOrder(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var first string
	for i, e := range []struct{ tenant, typ string }{{tenant, storage.EventAlertCreated}, {other, storage.EventAlertSent}, {tenant, storage.EventAlertSent}} {
		id, err := storage.EmitEvent(ctx, db, e.tenant, e.typ, map[string]string{"of": e.tenant})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = id
		}
	}
	got, err := storagetest.TenantEvents(ctx, db, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Type != storage.EventAlertCreated || got[1].Type != storage.EventAlertSent {
		t.Fatalf("events %+v", got)
	}
	for _, e := range got {
		var p map[string]string
		if err := json.Unmarshal(e.Payload, &p); err != nil || p["of"] != tenant || e.Dispatched {
			t.Fatalf("event %+v (%v)", e, err)
		}
	}
	o := &storage.EventOutbox{DB: db}
	if _, err := o.Dispatch(ctx, 10, func([]storage.ClaimedEvent) []error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, err = storagetest.TenantEvents(ctx, db, tenant); err != nil || len(got) != 2 || !got[0].Dispatched || !got[1].Dispatched {
		t.Fatalf("after dispatch %+v (%v)", got, err)
	}
	if err := storagetest.UndoDispatch(ctx, db, other, first); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant undid the dispatch: %v", err)
	}
	if err := storagetest.UndoDispatch(ctx, db, tenant, first); err != nil {
		t.Fatal(err)
	}
	if got, err = storagetest.TenantEvents(ctx, db, tenant); err != nil || len(got) != 2 || got[0].Dispatched || !got[1].Dispatched {
		t.Fatalf("after undoing the first dispatch %+v (%v)", got, err)
	}
	if none, err := storagetest.TenantEvents(ctx, db, stacktest.NewTenant()); err != nil || len(none) != 0 {
		t.Fatalf("a tenant without events: %+v (%v)", none, err)
	}
}
