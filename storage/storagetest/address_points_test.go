package storagetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestLockAddressPointsHoldsReadsOff(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	pts := &channelstate.AddressPoints{DB: db}
	lock, err := storagetest.LockAddressPoints(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback() }()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, _, err := pts.Lists(short, tenant, "", 500, 0); err == nil || short.Err() == nil {
		t.Fatalf("read while locked: %v, want it to wait", err)
	}
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pts.Lists(ctx, tenant, "", 500, 0); err != nil {
		t.Fatalf("read after the lock: %v", err)
	}
}
