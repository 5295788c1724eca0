package storage_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestBatchProgressIsTheBatchsOfTheTenant: a batch's progress is replaced
// by the next save, read only with its tenant and whole key, and deleted
// by the batch or, with whatever else the alert's batches left, by the
// alert; another tenant neither reads nor deletes it.
func TestBatchProgressIsTheBatchsOfTheTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	id := storagetest.NewAlert(t, db, tenant)
	k := storage.BatchKey{Tenant: tenant, AlertID: id, Channel: "email", Cycle: 1, Lo: 0, Hi: 4}
	read := func(k storage.BatchKey) string {
		t.Helper()
		b, err := storage.BatchProgress(ctx, db, k)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			return ""
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		out, _ := json.Marshal(v)
		return string(out)
	}
	if got := read(k); got != "" {
		t.Fatalf("a batch that saved nothing reads %s", got)
	}
	for _, p := range []string{`{"sent":[{"s":1}]}`, `{"sent":[{"s":1},{"s":2,"p":"m-2"}]}`} {
		if err := storage.SaveBatchProgress(ctx, db, k, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	const last = `{"sent":[{"s":1},{"p":"m-2","s":2}]}` // as read: keys sorted
	if got := read(k); got != last {
		t.Fatalf("read %s, want the last save", got)
	}
	theirs := k
	theirs.Tenant = other
	wider := k
	wider.Hi = 5
	if read(theirs) != "" || read(wider) != "" {
		t.Fatal("another tenant or another batch reads the batch's progress")
	}
	if err := storage.SaveBatchProgress(ctx, db, theirs, []byte(`{"sent":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := storage.DeleteBatchProgress(ctx, db, theirs); err != nil {
		t.Fatal(err)
	}
	if err := storage.DeleteAlertProgress(ctx, db, other, id); err != nil {
		t.Fatal(err)
	}
	if got := read(k); got != last {
		t.Fatalf("another tenant changed or deleted the batch's progress: %s", got)
	}

	if err := storage.DeleteBatchProgress(ctx, db, k); err != nil {
		t.Fatal(err)
	}
	if got := read(k); got != "" {
		t.Fatalf("deleted, the batch still reads %s", got)
	}
	next := k
	next.Channel = "text"
	for _, b := range []storage.BatchKey{k, next} {
		if err := storage.SaveBatchProgress(ctx, db, b, []byte(`{"sent":[{"s":3}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.DeleteAlertProgress(ctx, db, tenant, id); err != nil {
		t.Fatal(err)
	}
	if read(k) != "" || read(next) != "" {
		t.Fatal("the alert's end left its batches' progress")
	}
}

// TestNoBatchProgressOutlivesItsAlert: a save that comes once the alert
// has ended records nothing, and one made while the transaction that ends
// the alert runs waits for it, so that it neither comes after that
// transaction's delete nor is left behind by it.
func TestNoBatchProgressOutlivesItsAlert(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	id := storagetest.NewAlert(t, db, tenant)
	k := storage.BatchKey{Tenant: tenant, AlertID: id, Channel: "email", Cycle: 1, Lo: 0, Hi: 4}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := storage.MarkAlertCompleted(ctx, tx, tenant, id); err != nil {
		t.Fatal(err)
	}
	if err := storage.DeleteAlertProgress(ctx, tx, tenant, id); err != nil {
		t.Fatal(err)
	}
	saved := make(chan error, 1)
	go func() { saved <- storage.SaveBatchProgress(ctx, db, k, []byte(`{"sent":[{"s":1}]}`)) }()
	select {
	case err := <-saved:
		t.Fatalf("a save went ahead of the transaction that ends the alert (%v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if err := storage.SaveBatchProgress(ctx, db, k, []byte(`{"sent":[{"s":2}]}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := storage.BatchProgress(ctx, db, k); err != nil || b != nil {
		t.Fatalf("the alert ended, and its batch's progress reads %s (%v)", b, err)
	}
}

// TestSweepBatchProgressTakesWhatNoBatchReads: the sweep deletes, of every
// tenant and at most its limit at a time, the progress of an ended alert,
// of an alert that is gone and what was not written for
// BatchProgressMaxAge; a live batch's progress stays, even an old one.
func TestSweepBatchProgressTakesWhatNoBatchReads(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	progress := []byte(`{"sent":[{"s":1}]}`)
	batch := func(tn string, id int64) storage.BatchKey {
		return storage.BatchKey{Tenant: tn, AlertID: id, Channel: "email", Cycle: 1, Lo: 0, Hi: 4}
	}
	saved := func(tn string) storage.BatchKey {
		t.Helper()
		k := batch(tn, storagetest.NewAlert(t, db, tn))
		if err := storage.SaveBatchProgress(ctx, db, k, progress); err != nil {
			t.Fatal(err)
		}
		return k
	}
	age := func(k storage.BatchKey, d time.Duration) {
		t.Helper()
		if err := storagetest.AgeBatchProgress(ctx, db, k.Tenant, k.AlertID, d); err != nil {
			t.Fatal(err)
		}
	}
	live, old := saved(tenant), saved(other)
	age(old, storage.BatchProgressMaxAge-time.Hour)
	stale := saved(tenant)
	age(stale, storage.BatchProgressMaxAge+time.Minute)
	ended := saved(other)
	if _, err := storage.MarkAlertCompleted(ctx, db, other, ended.AlertID); err != nil {
		t.Fatal(err)
	}
	gone := batch(tenant, stale.AlertID+1_000_000)
	if err := storagetest.LeaveBatchProgress(ctx, db, gone, progress); err != nil {
		t.Fatal(err)
	}
	if err := storagetest.AgeBatchProgress(ctx, db, other, live.AlertID, time.Hour); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant aged the batch's progress: %v", err)
	}

	var swept []int64
	for range 3 {
		n, err := storage.SweepBatchProgress(ctx, db, 2)
		if err != nil {
			t.Fatal(err)
		}
		swept = append(swept, n)
	}
	if !slices.Equal(swept, []int64{2, 1, 0}) {
		t.Fatalf("sweeps of at most 2 deleted %v, want 2, 1, 0", swept)
	}
	for _, c := range []struct {
		name string
		k    storage.BatchKey
		kept bool
	}{{"live", live, true}, {"nearly a day old", old, true}, {"stale", stale, false}, {"ended", ended, false}, {"gone", gone, false}} {
		p, err := storage.BatchProgress(ctx, db, c.k)
		if err != nil || (p != nil) != c.kept {
			t.Errorf("%s batch: progress %s (%v), kept %v", c.name, p, err, c.kept)
		}
	}
}
