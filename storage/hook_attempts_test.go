package storage_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

func TestSmokeRunIsWrittenOncePerWorkflow(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	a, err := storage.RecordSmokeRun(ctx, db, tenant, "wf-1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := storage.RecordSmokeRun(ctx, db, tenant, "wf-1")
	if err != nil || a != b {
		t.Fatalf("retry wrote row %d, first %d (%v)", b, a, err)
	}
}

func TestHookAttemptsRecordDisableAndPurge(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var sub int64
	if err := db.GetContext(ctx, &sub, `INSERT INTO hook_subscriptions (tenant_id, url, event_types, headers, secret_encrypted)
		VALUES ($1, 'https://h.example/x', '{alert.sent}', '{"X-A":"1"}', 'sealed') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	h := &storage.HookAttempts{DB: db}
	tg, err := h.Target(ctx, tenant, sub)
	if err != nil || tg.URL != "https://h.example/x" || !tg.Active || string(tg.Secret) != "sealed" || len(tg.PlainHeaders) == 0 || tg.HeadersSealed != nil {
		t.Fatalf("%+v %v", tg, err)
	}
	if _, err := h.Target(ctx, other, sub); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's target: %v", err)
	}
	at := storage.HookAttempt{Tenant: tenant, SubscriptionID: sub, EventID: "evt_1", EventType: "alert.sent", Attempt: 1,
		RequestedAt: time.Now().Add(-48 * time.Hour), Outcome: "Failed", Error: "timeout"}
	id1, err := h.Record(ctx, at, "")
	if err != nil {
		t.Fatal(err)
	}
	code := 410
	at.ResponseStatus, at.Outcome, at.Error = &code, "Gone", ""
	id2, err := h.Record(ctx, at, "gone")
	if err != nil || id2 != id1 {
		t.Fatalf("the retried attempt got row %d, first %d (%v)", id2, id1, err)
	}
	if tg, _ := h.Target(ctx, tenant, sub); tg.Active {
		t.Fatal("the subscription is still active")
	}
	at.SubscriptionID = sub + 1000
	if _, err := h.Record(ctx, at, ""); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("attempt of a missing subscription: %v", err)
	}
	if n, err := h.Purge(ctx, 3); err != nil || n != 0 {
		t.Fatalf("purged %d %v", n, err)
	}
	if n, err := h.Count(ctx, tenant, sub); err != nil || n != 1 {
		t.Fatalf("%d attempts before the purge (%v)", n, err)
	}
	if n, err := h.Count(ctx, other, sub); err != nil || n != 0 {
		t.Fatalf("another tenant counts %d attempts (%v)", n, err)
	}
	if n, err := h.Purge(ctx, 1); err != nil || n < 1 {
		t.Fatalf("purged %d %v", n, err)
	}
	if n, err := h.Count(ctx, tenant, sub); err != nil || n != 0 {
		t.Fatalf("%d attempts after the purge (%v)", n, err)
	}
}
