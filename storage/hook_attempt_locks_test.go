package storage_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestDeletingASubscriptionWhileItIsDisabledNeverDeadlocks races the two
// writers of a subscription and its attempts: its deletion, which removes
// the attempts with it, and a retried attempt answered 410 Gone, which
// rewrites the attempt and disables the subscription. A reader holding
// the subscription lines them up, the deletion first. Both must finish:
// the attempt then finds the subscription gone.
func TestDeletingASubscriptionWhileItIsDisabledNeverDeadlocks(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	var sub int64
	if err := db.GetContext(ctx, &sub, `INSERT INTO hook_subscriptions (tenant_id, url, event_types, secret_encrypted)
		VALUES ($1, 'https://h.example/x', '{file.deleted}', 'sealed') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	h := &storage.HookAttempts{DB: db}
	at := storage.HookAttempt{Tenant: tenant, SubscriptionID: sub, EventID: "evt_1", EventType: "file.deleted", Attempt: 1,
		RequestedAt: time.Now(), Outcome: "Failed", Error: "timeout"}
	if _, err := h.Record(ctx, at, ""); err != nil {
		t.Fatal(err)
	}

	hold, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback() }()
	if _, err := hold.ExecContext(ctx, `SELECT 1 FROM hook_subscriptions WHERE id = $1 FOR SHARE`, sub); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var deleted, recorded error
	wg.Go(func() { deleted = hooksubs.New(db).Delete(ctx, tenant, sub) })
	storagetest.WaitBlocked(t, db, "FROM hook_subscriptions WHERE id")
	code := 410
	at.ResponseStatus, at.Outcome, at.Error = &code, "Gone", ""
	wg.Go(func() { _, recorded = h.Record(ctx, at, "gone") })
	storagetest.WaitBlocked(t, db, "UPDATE hook_subscriptions")
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if deleted != nil {
		t.Fatalf("delete: %v", deleted)
	}
	if recorded != nil && !errors.Is(recorded, storage.ErrNotFound) {
		t.Fatalf("record: %v", recorded)
	}
	if n, err := h.Count(ctx, tenant, sub); err != nil || n != 0 {
		t.Fatalf("%d attempts of the deleted subscription (%v)", n, err)
	}
}
