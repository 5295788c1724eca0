package storage_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

func TestEventOutboxDispatchesToTheTenantsSubscriptions(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	sub := func(tn, types string, active bool) int64 {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO hook_subscriptions (tenant_id, url, event_types, active, secret_encrypted)
			VALUES ($1, 'https://h.example', $2, $3, 's') RETURNING id`, tn, types, active); err != nil {
			t.Fatal(err)
		}
		return id
	}
	want := sub(tenant, "{alert.sent,alert.failed}", true)
	sub(tenant, "{alert.sent}", false)
	sub(tenant, "{file.uploaded}", true)
	sub(other, "{alert.sent}", true)
	also := sub(tenant, "{alert.sent}", true)
	for _, typ := range []string{storage.EventAlertSent, storage.EventAlertCreated} {
		if _, err := storage.EmitEvent(ctx, db, tenant, typ, map[string]int{"n": 1}); err != nil {
			t.Fatal(err)
		}
	}
	o := &storage.EventOutbox{DB: db}
	if n, err := o.Dispatch(ctx, 10, func([]storage.ClaimedEvent) error { return errors.New("down") }); err == nil || n != 0 {
		t.Fatalf("a failed delivery dispatched %d (%v)", n, err)
	}
	got := map[string][]int64{}
	record := func(events []storage.ClaimedEvent) error {
		for _, e := range events {
			if e.Tenant != tenant || string(e.Payload) != `{"n": 1}` {
				t.Errorf("event %+v", e)
			}
			got[e.Type] = e.Subscriptions
		}
		return nil
	}
	n, err := o.Dispatch(ctx, 1, record)
	if err != nil || n != 1 || len(got) != 1 || !slices.Equal(got[storage.EventAlertSent], []int64{want, also}) {
		t.Fatalf("first batch %d %v %v (oldest first, limit 1)", n, got, err)
	}
	n, err = o.Dispatch(ctx, 10, record)
	if _, ok := got[storage.EventAlertCreated]; err != nil || n != 1 || !ok || len(got[storage.EventAlertCreated]) != 0 {
		t.Fatalf("second batch %d %v %v", n, got, err)
	}
	if n, _ := o.Dispatch(ctx, 10, func([]storage.ClaimedEvent) error { return nil }); n != 0 {
		t.Fatalf("%d events dispatched twice", n)
	}
}

// The tenants take turns in the outbox: a tenant whose events fill it does
// not hold another tenant's behind all of them.
func TestEventOutboxLetsTenantsTakeTurns(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	emit := func(tn string, n int) {
		t.Helper()
		if _, err := storage.EmitEvent(ctx, db, tn, storage.EventAlertSent, map[string]int{"n": n}); err != nil {
			t.Fatal(err)
		}
	}
	for n := range 5 {
		emit(tenant, n)
	}
	emit(other, 0)
	emit(other, 1)
	o := &storage.EventOutbox{DB: db}
	var got []string
	n, err := o.Dispatch(ctx, 4, func(events []storage.ClaimedEvent) error {
		for _, e := range events {
			who := "flood"
			if e.Tenant == other {
				who = "other"
			}
			got = append(got, who+string(e.Payload[len(e.Payload)-2]))
		}
		return nil
	})
	if want := []string{"flood0", "other0", "flood1", "other1"}; err != nil || n != 4 || !slices.Equal(got, want) {
		t.Fatalf("dispatched %v (%d, %v), want %v", got, n, err, want)
	}
	// The flood's next event is its turn 3, and a new event of the other
	// tenant, its first waiting now, goes before it.
	emit(other, 2)
	got = nil
	if _, err := o.Dispatch(ctx, 1, func(events []storage.ClaimedEvent) error {
		for _, e := range events {
			got = append(got, e.Tenant+string(e.Payload[len(e.Payload)-2]))
		}
		return nil
	}); err != nil || len(got) != 1 || got[0] != other+"2" {
		t.Fatalf("then %v %v", got, err)
	}
}
