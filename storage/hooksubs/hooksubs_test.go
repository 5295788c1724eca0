package hooksubs_test

import (
	"errors"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
)

func TestSubscriptionsAreTenantScoped(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	set := hooksubs.Settings{URL: "https://example.com/a", EventTypes: []string{"alert.sent"}, Active: true, Headers: []byte(`{"X-A":"1"}`)}
	a, err := s.Create(ctx, tenant, set, []byte("sealed"))
	if err != nil {
		t.Fatal(err)
	}
	set.URL = "https://example.com/b"
	b, err := s.Create(ctx, tenant, set, []byte("sealed"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, other, set, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	if a.URL != "https://example.com/a" || !a.Active || len(a.EventTypes) != 1 || string(a.Headers) != `{"X-A": "1"}` {
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
	if total != 2 || len(rows) != 1 || rows[0].ID != b.ID {
		t.Fatalf("first page by url descending: total %d, %+v", total, rows)
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

func TestHistoryKeepsThirtyDays(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := hooksubs.New(db)
	sub, err := s.Create(ctx, tenant, hooksubs.Settings{URL: "https://example.com", EventTypes: []string{"alert.sent"}, Active: true, Headers: []byte(`{}`)}, []byte("x"))
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
	if total != 2 || len(rows) != 2 || rows[0].ID != ids[0] || rows[1].ID != ids[1] {
		t.Fatalf("history: total %d, %+v", total, rows)
	}
	if rows, total, _ := s.History(ctx, other, sub.ID, order, 10, 0); total != 0 || len(rows) != 0 {
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
