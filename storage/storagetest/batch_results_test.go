package storagetest_test

import (
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestBatchResultsReadTheBatchOfTheTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	id := storagetest.NewAlert(t, db, tenant)
	k := storage.BatchKey{Tenant: tenant, AlertID: id, Channel: "text", Cycle: 1, Lo: 0, Hi: 2}
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		if err := storage.RecordDeliveries(ctx, tx, k, []storage.DeliveryRow{
			{Seq: 1, Address: "+1", Status: storage.DeliverySent, ProviderMessageID: "p1"},
			{Seq: 2, Address: "+2", Status: storage.DeliveryFailed, Error: "invalid", Permanent: true}}); err != nil {
			return err
		}
		next := k
		next.Lo, next.Hi = 2, 4
		return storage.RecordDeliveries(ctx, tx, next, []storage.DeliveryRow{{Seq: 3, Address: "+3", Status: storage.DeliverySent}})
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := storagetest.BatchResults(ctx, db, k)
	if err != nil || len(got) != 2 || got[0].ProviderMessageID != "p1" || got[0].Attempts != 1 || !got[1].Permanent || got[1].Error != "invalid" {
		t.Fatalf("%+v %v", got, err)
	}
	other := k
	other.Tenant = stacktest.NewTenant()
	if got, _ := storagetest.BatchResults(ctx, db, other); len(got) != 0 {
		t.Fatal("another tenant reads the batch")
	}
}
