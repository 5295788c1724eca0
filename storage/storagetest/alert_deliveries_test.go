package storagetest_test

import (
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestAlertDeliveriesAreTheAlertsOnEveryChannel(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	al := storagetest.NewAlert(t, db, tenant)
	theirs := storagetest.NewAlert(t, db, other)
	record := func(k storage.BatchKey, rows ...storage.DeliveryRow) {
		t.Helper()
		if err := db.InTx(ctx, func(tx *sqlx.Tx) error { return storage.RecordDeliveries(ctx, tx, k, rows) }); err != nil {
			t.Fatal(err)
		}
	}
	record(storage.BatchKey{Tenant: tenant, AlertID: al, Channel: "voice", Cycle: 1, Lo: 0, Hi: 2},
		storage.DeliveryRow{Seq: 2, Address: "+15550002", Status: storage.DeliveryFailed, Error: "busy"})
	record(storage.BatchKey{Tenant: tenant, AlertID: al, Channel: "email", Cycle: 1, Lo: 0, Hi: 2},
		storage.DeliveryRow{Seq: 2, Address: "alan@example.com", Status: storage.DeliverySent},
		storage.DeliveryRow{Seq: 1, Address: "ada@example.com", Status: storage.DeliverySent})
	record(storage.BatchKey{Tenant: other, AlertID: theirs, Channel: "email", Cycle: 1, Lo: 0, Hi: 2},
		storage.DeliveryRow{Seq: 1, Address: "ada@example.com", Status: storage.DeliverySent})

	got, err := storagetest.AlertDeliveries(ctx, db, tenant, al)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Channel != "email" || got[0].Seq != 1 || got[1].Seq != 2 ||
		got[2].Channel != "voice" || got[2].Status != storage.DeliveryFailed || got[2].Error != "busy" {
		t.Fatalf("deliveries %+v", got)
	}
	if none, err := storagetest.AlertDeliveries(ctx, db, other, al); err != nil || len(none) != 0 {
		t.Fatalf("another tenant reads %+v (%v)", none, err)
	}
}

func TestTakeAwayDeliveriesFailsTheWriteOfResults(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	k := storage.BatchKey{Tenant: tenant, AlertID: storagetest.NewAlert(t, db, tenant), Channel: "email", Cycle: 1, Lo: 0, Hi: 1}
	if err := storagetest.TakeAwayDeliveries(ctx, db); err != nil {
		t.Fatal(err)
	}
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		return storage.RecordDeliveries(ctx, tx, k, []storage.DeliveryRow{{Seq: 1, Address: "ada@example.com", Status: storage.DeliverySent}})
	})
	if err == nil {
		t.Fatal("results were written without their table")
	}
}
