package hooksubs_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestSubscriptionsAreTenantScoped(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	set := hooksubs.Settings{URL: "https://example.com/a", EventTypes: []string{"alert.sent"}, Active: true, HeadersSealed: []byte("sealed headers")}
	a, err := s.Create(ctx, tenant, newID(t, s), set, []byte("sealed"))
	if err != nil {
		t.Fatal(err)
	}
	set.URL = "https://example.org/b"
	b, err := s.Create(ctx, tenant, newID(t, s), set, []byte("sealed"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, other, newID(t, s), set, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	if a.URL != "https://example.com/a" || !a.Active || len(a.EventTypes) != 1 || string(a.HeadersSealed) != "sealed headers" || string(a.PlainHeaders) != "{}" {
		t.Fatalf("created %+v", a)
	}
	if _, err := s.Get(ctx, other, a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant reads the subscription: %v", err)
	}
	order := hooksubs.Sorting.Columns["url"] + " DESC, " + hooksubs.Sorting.TieBreak
	rows, total, err := s.List(ctx, tenant, order, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != storage.ExactTotal(2) || len(rows) != 1 || rows[0].ID != b.ID {
		t.Fatalf("first page by url descending: total %+v, %+v", total, rows)
	}

	if _, err := s.DB.ExecContext(ctx, `UPDATE hook_subscriptions SET active = false, disabled_reason = 'gone', disabled_at = now() WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	set.Active = true
	up, err := s.Update(ctx, tenant, a.ID, set)
	if err != nil {
		t.Fatal(err)
	}
	if up.URL != set.URL || up.DisabledReason != "" || up.DisabledAt != nil {
		t.Fatalf("reactivated %+v", up)
	}
	if _, err := s.Update(ctx, other, a.ID, set); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant updates the subscription: %v", err)
	}
	if err := s.Delete(ctx, other, a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant deletes the subscription: %v", err)
	}
	if err := s.Delete(ctx, tenant, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, tenant, a.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func newID(t *testing.T, s *hooksubs.Store) int64 {
	t.Helper()
	id, err := s.NewID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Rows written before headers were sealed keep them in plain text until
// SealPlainHeaders replaces them, unless the row changed meanwhile.
func TestPlainHeadersAreSealedOnce(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	legacy := func(tenant, headers string) int64 {
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO hook_subscriptions (tenant_id, url, event_types, headers, secret_encrypted)
			VALUES ($1, 'https://h.example/x', '{alert.sent}', $2, 'sealed') RETURNING id`, tenant, headers); err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b, none := legacy(tenant, `{"X-A": "1"}`), legacy(other, `{"X-B": "2"}`), legacy(tenant, `{}`)
	rows, err := s.WithPlainHeaders(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	mine := map[int64]hooksubs.PlainHeaderRow{}
	for _, r := range rows {
		if r.ID == a || r.ID == b || r.ID == none {
			mine[r.ID] = r
		}
	}
	if len(mine) != 2 || mine[a].Tenant != tenant || string(mine[a].Headers) != `{"X-A": "1"}` || mine[b].Tenant != other {
		t.Fatalf("plain rows %+v", mine)
	}
	if ok, err := s.SealPlainHeaders(ctx, mine[a], []byte("sealed a")); err != nil || !ok {
		t.Fatalf("seal: %v %v", ok, err)
	}
	got, err := s.Get(ctx, tenant, a)
	if err != nil || string(got.HeadersSealed) != "sealed a" || string(got.PlainHeaders) != "{}" {
		t.Fatalf("sealed row %+v %v", got, err)
	}
	if ok, err := s.SealPlainHeaders(ctx, mine[a], []byte("again")); err != nil || ok {
		t.Fatalf("sealed twice: %v %v", ok, err)
	}
	// An update between the read and the seal wins.
	if _, err := s.Update(ctx, other, b, hooksubs.Settings{URL: "https://h.example/y", EventTypes: []string{"alert.sent"}, HeadersSealed: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SealPlainHeaders(ctx, mine[b], []byte("stale")); err != nil || ok {
		t.Fatalf("sealed over an update: %v %v", ok, err)
	}
	if got, _ := s.Get(ctx, other, b); string(got.HeadersSealed) != "new" {
		t.Fatalf("after the update %+v", got)
	}
}

// During a rolling upgrade an instance of a version before sealed headers
// changes a sealed row by writing plain headers alone: the row is taken
// again, and sealing its plain headers replaces the stale sealed ones.
func TestPlainHeadersWrittenOverSealedOnesAreSealed(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	id, err := s.NewID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, tenant, id, hooksubs.Settings{URL: "https://h.example/x", EventTypes: []string{"alert.sent"},
		HeadersSealed: []byte("sealed old")}, []byte("secret")); err != nil {
		t.Fatal(err)
	}
	if err := storagetest.OldVersionHookHeaders(ctx, db, tenant, id, `{"X-A": "new"}`); err != nil {
		t.Fatal(err)
	}
	rows, err := s.WithPlainHeaders(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var row *hooksubs.PlainHeaderRow
	for i := range rows {
		if rows[i].ID == id {
			row = &rows[i]
		}
	}
	if row == nil || string(row.Headers) != `{"X-A": "new"}` {
		t.Fatalf("the sealed row with plain headers is not taken: %+v", rows)
	}
	if ok, err := s.SealPlainHeaders(ctx, *row, []byte("sealed new")); err != nil || !ok {
		t.Fatalf("seal: %v %v", ok, err)
	}
	if got, err := s.Get(ctx, tenant, id); err != nil || string(got.HeadersSealed) != "sealed new" || string(got.PlainHeaders) != "{}" {
		t.Fatalf("after sealing %+v %v", got, err)
	}
}

func TestHistoryKeepsThirtyDays(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	sub, err := s.Create(ctx, tenant, newID(t, s), hooksubs.Settings{URL: "https://example.com", EventTypes: []string{"alert.sent"}, Active: true}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, age := range []string{"1 hour", "2 days", "40 days"} {
		var id int64
		if err := s.DB.GetContext(ctx, &id, `INSERT INTO hook_attempts (tenant_id, subscription_id, event_id, event_type, attempt, requested_at, response_status, outcome)
			VALUES ($1, $2, 'evt', 'alert.sent', $3, now() - $4::interval, 200, 'Delivered') RETURNING id`, tenant, sub.ID, i+1, age); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	order := hooksubs.HistorySorting.Default + ", " + hooksubs.HistorySorting.TieBreak
	rows, total, err := s.History(ctx, tenant, sub.ID, order, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != storage.ExactTotal(2) || len(rows) != 2 || rows[0].ID != ids[0] || rows[1].ID != ids[1] {
		t.Fatalf("history: total %+v, %+v", total, rows)
	}
	if rows, total, _ := s.History(ctx, other, sub.ID, order, 10, 0); total != storage.ExactTotal(0) || len(rows) != 0 {
		t.Fatal("another tenant reads the history")
	}
	a, err := s.Attempt(ctx, tenant, ids[2])
	if err != nil || a.Attempt != 3 || a.ResponseStatus == nil || *a.ResponseStatus != 200 {
		t.Fatalf("attempt %+v, %v", a, err)
	}
	if _, err := s.Attempt(ctx, other, ids[2]); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant reads the attempt: %v", err)
	}
}

// Creates that race for a tenant's last places take them and no more: the
// count and the insert are under the tenant's lock. Another tenant's
// creates do not wait for it, nor count.
func TestCreatesRacingForTheLastPlacesTakeNoMore(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	const free, racers = 5, 40
	if _, err := storagetest.AddHookSubscriptions(ctx, db, tenant, hooksubs.MaxPerTenant-free, "https://example.com", "alert.sent"); err != nil {
		t.Fatal(err)
	}
	set := hooksubs.Settings{URL: "https://example.com/a", EventTypes: []string{"alert.sent"}, Active: true}
	ids := make([]int64, racers+1)
	for i := range ids {
		ids[i] = newID(t, s)
	}
	errs := make([]error, racers)
	ready, gate := sync.WaitGroup{}, make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-gate
			_, errs[i] = s.Create(ctx, tenant, ids[i], set, []byte("sealed"))
		})
	}
	ready.Wait()
	close(gate)
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, hooksubs.ErrTooMany):
			t.Fatal(err)
		}
	}
	if _, total, err := s.List(ctx, tenant, "id", 1, 0); err != nil || created != free || total != storage.ExactTotal(hooksubs.MaxPerTenant) {
		t.Fatalf("%d of %d racing creates passed, the tenant has %+v subscriptions (%v); want %d and %d", created, racers, total, err, free, hooksubs.MaxPerTenant)
	}
	if _, err := s.Create(ctx, other, ids[racers], set, []byte("sealed")); err != nil {
		t.Fatalf("another tenant: %v", err)
	}
}

// TestTestsRacingTakeOnlyTheBurst: tests of one subscription asked for at
// once are claimed TestBurst times, however many race; the rest wait
// about TestInterval; another tenant's claim finds no subscription.
func TestTestsRacingTakeOnlyTheBurst(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	ids, err := storagetest.AddHookSubscriptions(ctx, db, tenant, 1, "https://example.com", "alert.sent")
	if err != nil {
		t.Fatal(err)
	}
	const racers = 20
	waits := make([]time.Duration, racers)
	errs := make([]error, racers)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-gate
			waits[i], errs[i] = s.ClaimTest(ctx, tenant, ids[0])
		})
	}
	close(gate)
	wg.Wait()
	claimed := 0
	for i := range racers {
		switch {
		case errs[i] != nil:
			t.Fatal(errs[i])
		case waits[i] == 0:
			claimed++
		case waits[i] > hooksubs.TestInterval:
			t.Errorf("a refused test waits %s, more than %s", waits[i], hooksubs.TestInterval)
		}
	}
	if claimed != hooksubs.TestBurst {
		t.Errorf("%d of %d racing tests claimed, want %d", claimed, racers, hooksubs.TestBurst)
	}
	if _, err := s.ClaimTest(ctx, other, ids[0]); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another tenant claims a test: %v", err)
	}
}
