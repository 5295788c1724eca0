package benchdata_test

import (
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/benchdata"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func TestSeedAndReadBack(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	if _, _, err := benchdata.SeedContacts(ctx, db, other, 2); err != nil {
		t.Fatal(err)
	}
	group, first, err := benchdata.SeedContacts(ctx, db, tenant, 5)
	if err != nil || group == 0 || first == 0 {
		t.Fatalf("%d %d %v", group, first, err)
	}
	var members int
	if err := db.GetContext(ctx, &members, `SELECT count(*) FROM group_memberships m JOIN person_phones p ON p.person_id = m.person_id
		WHERE m.tenant_id = $1 AND m.group_id = $2 AND p.tenant_id = $1`, tenant, group); err != nil || members != 5 {
		t.Fatalf("%d members with phones (%v)", members, err)
	}

	id := storagetest.NewAlert(t, db, tenant)
	if _, err := db.ExecContext(ctx, `INSERT INTO alert_recipients (tenant_id, alert_id, seq) SELECT $1, $2, g FROM generate_series(1, 3) g`, tenant, id); err != nil {
		t.Fatal(err)
	}
	err = db.InTx(ctx, func(tx *sqlx.Tx) error {
		return storage.RecordDeliveries(ctx, tx, storage.BatchKey{Tenant: tenant, AlertID: id, Channel: "text", Cycle: 1, Hi: 3},
			[]storage.DeliveryRow{{Seq: 1, Status: storage.DeliverySent}, {Seq: 2, Status: storage.DeliveryRetrying}})
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := benchdata.FirstCycleCoverage(ctx, db, tenant, id, "text")
	if err != nil || c.Rows != 1 || c.Covered != 1 || c.Recipients != 3 {
		t.Fatalf("%+v %v", c, err)
	}
	if c, _ := benchdata.FirstCycleCoverage(ctx, db, other, id, "text"); c.Recipients != 0 {
		t.Fatal("another tenant's coverage")
	}

	final, err := benchdata.FinalTimes(ctx, db, []benchdata.AlertKey{{Tenant: tenant, ID: id}})
	if err != nil || len(final) != 0 {
		t.Fatalf("a Processing alert is final: %v %v", final, err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE alerts SET sent_at = now() WHERE tenant_id = $1 AND id = $2`, tenant, id); err != nil {
		t.Fatal(err)
	}
	if final, _ := benchdata.FinalTimes(ctx, db, []benchdata.AlertKey{{Tenant: other, ID: id}}); len(final) != 0 {
		t.Fatal("another tenant's alert is final")
	}
	if final, _ := benchdata.FinalTimes(ctx, db, []benchdata.AlertKey{{Tenant: tenant, ID: id}}); final[id].IsZero() {
		t.Fatal("the sent alert is not final")
	}

	if _, err := db.ExecContext(ctx, `INSERT INTO distribution_lists (tenant_id, name) VALUES ($1, 'a'), ($1, 'b')`, tenant); err != nil {
		t.Fatal(err)
	}
	if l, err := benchdata.FirstDistributionList(ctx, db, tenant); err != nil || l == 0 {
		t.Fatalf("%d %v", l, err)
	}
	if _, err := benchdata.FirstDistributionList(ctx, db, other); err == nil {
		t.Fatal("another tenant's list")
	}
	if benchdata.ServerVersion(ctx, db) == "" {
		t.Fatal("no server version")
	}
	if err := benchdata.VacuumContacts(ctx, db); err != nil {
		t.Fatal(err)
	}
	benchdata.Checkpoint(ctx, db)
	schema := "bench_t_" + stacktest.Suffix()
	if err := benchdata.CreateSchema(ctx, db, schema); err != nil {
		t.Fatal(err)
	}
	benchdata.DropSchema(ctx, db, schema)
	if err := benchdata.CreateSchema(ctx, db, schema); err != nil {
		t.Fatalf("the schema was not dropped: %v", err)
	}
	benchdata.DropSchema(ctx, db, schema)
}

func TestUndispatchedEventsAreTheTenants(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	for _, tn := range []string{tenant, tenant, other} {
		if _, err := storage.EmitEvent(ctx, db, tn, storage.EventAlertSent, map[string]int{}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := benchdata.UndispatchedEvents(ctx, db, tenant); err != nil || n != 2 {
		t.Fatalf("%d undispatched (%v), want 2", n, err)
	}
	o := &storage.EventOutbox{DB: db}
	if _, err := o.Dispatch(ctx, 10, func([]storage.ClaimedEvent) []error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n, err := benchdata.UndispatchedEvents(ctx, db, tenant); err != nil || n != 0 {
		t.Fatalf("%d undispatched after the dispatch (%v)", n, err)
	}
}
