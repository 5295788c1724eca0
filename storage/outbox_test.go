package storage_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
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
	notTried := func(events []storage.ClaimedEvent) []error {
		errs := make([]error, len(events))
		for i := range errs {
			errs[i] = fmt.Errorf("temporal down: %w", storage.ErrNotTried)
		}
		return errs
	}
	if c, err := o.Dispatch(ctx, 10, notTried); err != nil || c.Claimed != 2 || c.Dispatched != 0 || c.Deferred != 0 {
		t.Fatalf("events not tried: %+v (%v)", c, err)
	}
	got := map[string][]int64{}
	record := func(events []storage.ClaimedEvent) []error {
		for _, e := range events {
			if e.Tenant != tenant || string(e.Payload) != `{"n": 1}` || e.Attempts != 0 {
				t.Errorf("event %+v", e)
			}
			got[e.Type] = e.Subscriptions
		}
		return nil
	}
	c, err := o.Dispatch(ctx, 1, record)
	if err != nil || c.Dispatched != 1 || !c.Full || len(got) != 1 || !slices.Equal(got[storage.EventAlertSent], []int64{want, also}) {
		t.Fatalf("first claim %+v %v %v (oldest first; one event, although its 2 deliveries pass a budget of 1)", c, got, err)
	}
	c, err = o.Dispatch(ctx, 10, record)
	if _, ok := got[storage.EventAlertCreated]; err != nil || c.Dispatched != 1 || c.Deliveries != 1 || c.Full || !ok || len(got[storage.EventAlertCreated]) != 0 {
		t.Fatalf("second claim %+v %v %v", c, got, err)
	}
	if c, _ := o.Dispatch(ctx, 10, func([]storage.ClaimedEvent) []error { return nil }); c.Claimed != 0 {
		t.Fatalf("%+v: events dispatched twice", c)
	}
}

// A claim is bounded by the deliveries its events ask for: events are
// taken in turn order while their subscriptions stay within the budget,
// the first always, so a tenant with many subscriptions costs a claim no
// more than another and the tenants still take turns.
func TestEventOutboxClaimIsBoundedByDeliveries(t *testing.T) {
	t.Parallel()
	ctx, db, flood, other := stacktest.DBTenants(t)
	if _, err := storagetest.AddHookSubscriptions(ctx, db, flood, 4, "https://h.example", storage.EventAlertSent); err != nil {
		t.Fatal(err)
	}
	if _, err := storagetest.AddHookSubscriptions(ctx, db, other, 1, "https://h.example", storage.EventAlertSent); err != nil {
		t.Fatal(err)
	}
	emit := func(tn string, n int) {
		t.Helper()
		for i := range n {
			if _, err := storage.EmitEvent(ctx, db, tn, storage.EventAlertSent, map[string]int{"n": i}); err != nil {
				t.Fatal(err)
			}
		}
	}
	emit(flood, 5)
	emit(other, 1)
	o := &storage.EventOutbox{DB: db}
	claim := func(budget int) (storage.EventClaim, []string) {
		t.Helper()
		var got []string
		c, err := o.Dispatch(ctx, budget, func(events []storage.ClaimedEvent) []error {
			for _, e := range events {
				who := "flood"
				if e.Tenant == other {
					who = "other"
				}
				got = append(got, fmt.Sprintf("%s%s:%d", who, e.Payload[len(e.Payload)-2:len(e.Payload)-1], len(e.Subscriptions)))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return c, got
	}
	// 4 + 1 + 4 deliveries; the flood's next 4 would pass 10.
	if c, got := claim(10); !slices.Equal(got, []string{"flood0:4", "other0:1", "flood1:4"}) || c.Deliveries != 9 || !c.Full || c.Dispatched != 3 {
		t.Fatalf("first claim %v %+v", got, c)
	}
	// An event whose deliveries alone pass the budget is claimed alone.
	if c, got := claim(3); !slices.Equal(got, []string{"flood2:4"}) || c.Deliveries != 4 || !c.Full {
		t.Fatalf("a claim of 3 deliveries %v %+v", got, c)
	}
	if c, got := claim(8); !slices.Equal(got, []string{"flood3:4", "flood4:4"}) || c.Deliveries != 8 || !c.Full {
		t.Fatalf("a claim that fills its budget %v %+v", got, c)
	}
	if c, got := claim(8); len(got) != 0 || c.Full {
		t.Fatalf("the drained outbox %v %+v", got, c)
	}
}

// An event whose deliveries could not all be started stays undispatched
// and waits before it is claimed again; the events around it, of its
// tenant and of others, are marked dispatched. Once due it is claimed
// first again (its turn is kept), with its attempts counted.
func TestEventOutboxDefersOnlyTheEventsThatFailed(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var ids []string
	for _, tn := range []string{tenant, tenant, tenant, other} {
		id, err := storage.EmitEvent(ctx, db, tn, storage.EventAlertSent, map[string]int{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	failing := ids[0]
	o := &storage.EventOutbox{DB: db}
	failFirst := func(events []storage.ClaimedEvent) []error {
		errs := make([]error, len(events))
		for i, e := range events {
			if e.ID == failing {
				errs[i] = errors.New("temporal refused the start")
			}
		}
		return errs
	}
	if c, err := o.Dispatch(ctx, 10, failFirst); err != nil || c.Claimed != 4 || c.Dispatched != 3 || c.Deferred != 1 {
		t.Fatalf("a claim with one failed event: %+v (%v)", c, err)
	}
	if c, err := o.Dispatch(ctx, 10, failFirst); err != nil || c.Claimed != 0 {
		t.Fatalf("the failed event was claimed again at once: %+v (%v)", c, err)
	}
	if _, err := storage.EmitEvent(ctx, db, tenant, storage.EventAlertSent, map[string]int{}); err != nil {
		t.Fatal(err)
	}
	if c, err := o.Dispatch(ctx, 10, failFirst); err != nil || c.Claimed != 1 || c.Dispatched != 1 {
		t.Fatalf("the tenant's next event behind the failed one: %+v (%v)", c, err)
	}
	if err := storagetest.MakeEventsDue(ctx, db, tenant); err != nil {
		t.Fatal(err)
	}
	var attempts []int
	c, err := o.Dispatch(ctx, 10, func(events []storage.ClaimedEvent) []error {
		for _, e := range events {
			if e.ID != failing {
				t.Errorf("claimed %s, want only %s", e.ID, failing)
			}
			attempts = append(attempts, e.Attempts)
		}
		return nil
	})
	if err != nil || c.Dispatched != 1 || !slices.Equal(attempts, []int{1}) {
		t.Fatalf("the failed event once due: %+v, attempts %v (%v)", c, attempts, err)
	}
	stored, err := storagetest.TenantEvents(ctx, db, tenant)
	if err != nil || len(stored) != 4 || slices.ContainsFunc(stored, func(e storagetest.RecordedEvent) bool { return !e.Dispatched }) {
		t.Fatalf("the tenant's events at the end %+v (%v)", stored, err)
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
	c, err := o.Dispatch(ctx, 4, func(events []storage.ClaimedEvent) []error {
		for _, e := range events {
			who := "flood"
			if e.Tenant == other {
				who = "other"
			}
			got = append(got, who+string(e.Payload[len(e.Payload)-2]))
		}
		return nil
	})
	if want := []string{"flood0", "other0", "flood1", "other1"}; err != nil || c.Dispatched != 4 || !slices.Equal(got, want) {
		t.Fatalf("dispatched %v (%+v, %v), want %v", got, c, err, want)
	}
	// The flood's next event is its turn 3, and a new event of the other
	// tenant, its first waiting now, goes before it.
	emit(other, 2)
	got = nil
	if _, err := o.Dispatch(ctx, 1, func(events []storage.ClaimedEvent) []error {
		for _, e := range events {
			got = append(got, e.Tenant+string(e.Payload[len(e.Payload)-2]))
		}
		return nil
	}); err != nil || len(got) != 1 || got[0] != other+"2" {
		t.Fatalf("then %v %v", got, err)
	}
}
