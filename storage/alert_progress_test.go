package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func exec(t *testing.T, db *storage.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatal(err)
	}
}

func TestAlertProgressIsKeptPerTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	id := storagetest.NewAlert(t, db, tenant)

	for _, size := range []int{50, 80} { // the first size stays
		var bs int
		err := db.InTx(ctx, func(tx *sqlx.Tx) (err error) {
			bs, err = storage.SetBatchSize(ctx, tx, tenant, id, size)
			return err
		})
		if err != nil || bs != 50 {
			t.Fatalf("batch size %d %v", bs, err)
		}
	}
	for _, c := range []int{2, 1} {
		if err := storage.StartCycle(ctx, db, tenant, id, "", c); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.StartCycle(ctx, db, other, id, "", 5); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's cycle: %v", err)
	}
	al, err := storage.GetAlert(ctx, db, tenant, id)
	if err != nil || al.CurrentCycle != 2 {
		t.Fatalf("cycle %+v %v", al, err)
	}
	if st, err := storage.AlertStatus(ctx, db, tenant, id); err != nil || st != storage.AlertProcessing {
		t.Fatalf("status %q %v", st, err)
	}
	if _, err := storage.AlertStatus(ctx, db, other, id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("other tenant's status: %v", err)
	}
	if first, err := storage.MarkAlertCompleted(ctx, db, other, id); err != nil || first {
		t.Fatalf("other tenant completed it: %v %v", first, err)
	}
	if first, err := storage.MarkAlertCompleted(ctx, db, tenant, id); err != nil || !first {
		t.Fatalf("first completion %v %v", first, err)
	}
	if first, _ := storage.MarkAlertCompleted(ctx, db, tenant, id); first {
		t.Fatal("completed twice")
	}

	exec(t, db, `INSERT INTO alert_recipients (tenant_id, alert_id, seq, confirmed_at) VALUES ($1, $2, 1, now()), ($1, $2, 2, NULL)`, tenant, id)
	if n, err := storage.CountConfirmed(ctx, db, tenant, id); err != nil || n != 1 {
		t.Fatalf("confirmed %d %v", n, err)
	}
	if n, _ := storage.CountConfirmed(ctx, db, other, id); n != 0 {
		t.Fatal("other tenant counts confirmations")
	}

	rec := storage.BroadcastRecord{Tenant: tenant, AlertID: id, Channel: "eas", Cycle: 1, Destination: "d1", Name: "D1",
		Status: storage.DeliveryRetrying, Error: "busy", Key: "k1"}
	for _, st := range []string{storage.DeliveryRetrying, storage.DeliverySent, storage.DeliveryFailed} {
		rec.Status = st
		if err := storage.RecordBroadcast(ctx, db, rec); err != nil {
			t.Fatal(err)
		}
	}
	rec.Destination, rec.Status = "d2", storage.DeliveryRetrying
	if err := storage.RecordBroadcast(ctx, db, rec); err != nil {
		t.Fatal(err)
	}
	done, err := storage.FinishedBroadcasts(ctx, db, tenant, id, "eas", 1)
	if err != nil || len(done) != 1 || done[0] != "d1" {
		t.Fatalf("finished %v %v (a Sent broadcast keeps its result)", done, err)
	}
	if done, _ := storage.FinishedBroadcasts(ctx, db, other, id, "eas", 1); len(done) != 0 {
		t.Fatal("other tenant sees broadcasts")
	}
	exec(t, db, `INSERT INTO alert_etn_targets (tenant_id, alert_id, seq, phone, source, status, latitude, longitude) VALUES ($1, $2, 1, '+15550000001', 'contact', 'Delivered', 0, 0)`, tenant, id)
	a := &storage.Alert{TenantID: tenant, ID: id, Channels: pq.StringArray{"eas", "etn"}}
	if ts, err := storage.AlertTotals(ctx, db, a); err != nil || len(ts) != 2 ||
		ts[0] != (alert.Totals{Total: 2, Sent: 1, Retrying: 1}) || ts[1] != (alert.Totals{Total: 1, Delivered: 1}) {
		t.Fatalf("the alert's totals %+v %v", ts, err)
	}
	a.TenantID = other
	if ts, _ := storage.AlertTotals(ctx, db, a); ts[0] != (alert.Totals{}) || ts[1] != (alert.Totals{}) {
		t.Fatalf("another tenant counts the broadcasts: %+v", ts)
	}
}

func TestEarlyCallStatusesSettleSentDeliveries(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	id := storagetest.NewAlert(t, db, tenant)
	k := storage.BatchKey{Tenant: tenant, AlertID: id, Channel: "voice", Cycle: 1, Lo: 0, Hi: 3}
	key := func(seq string) string { return "alert-" + tenant + "-x:voice:1:" + seq }
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		return storage.RecordDeliveries(ctx, tx, k, []storage.DeliveryRow{
			{Seq: 1, Address: "+1", Status: storage.DeliverySent}, {Seq: 2, Address: "+2", Status: storage.DeliverySent},
			{Seq: 3, Address: "+3", Status: storage.DeliverySent}})
	})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, db, `INSERT INTO voice_calls (tenant_id, call_key, channel, alert_id, recipient, message, status, next_attempt_at)
		VALUES ($1, $2, 'voice', $5, '+1', '{}', 'Answered', NULL), ($1, $3, 'voice', $5, '+2', '{}', 'Busy', NULL),
			($1, $4, 'voice', $5, '+3', '{}', 'Busy', now() + interval '1 hour')`, tenant, key("1"), key("2"), key("3"), id)
	n, err := storage.ApplyEarlyCallStatuses(ctx, db, storage.BatchKey{Tenant: other, AlertID: id, Channel: "voice", Cycle: 1}, []string{key("1")})
	if err != nil || n != 0 {
		t.Fatalf("another tenant's calls applied: %d %v", n, err)
	}
	n, err = storage.ApplyEarlyCallStatuses(ctx, db, k, []string{key("1"), key("2"), key("3")})
	if err != nil || n != 2 {
		t.Fatalf("applied %d %v, want 2 (the redialling call waits)", n, err)
	}
	var st []string
	if err := db.SelectContext(ctx, &st, `SELECT status FROM alert_deliveries WHERE alert_id = $1 ORDER BY seq`, id); err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || st[0] != "Delivered" || st[1] != "Failed" || st[2] != "Sent" {
		t.Fatalf("statuses %v", st)
	}
}

func TestAddressesAndFilesAreTheTenants(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	var p int64
	if err := db.GetContext(ctx, &p, `INSERT INTO people (tenant_id) VALUES ($1) RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	exec(t, db, `INSERT INTO person_devices (tenant_id, person_id, app, token) VALUES ($1, $2, 'push', 't1'), ($1, $2, 'push', 't2'), ($1, $2, 'myalerts', 'm1')`, tenant, p)
	exec(t, db, `INSERT INTO person_phones (tenant_id, person_id, number, phone_type) VALUES ($1, $2, '+15550000001', 'Fax'), ($1, $2, '+15550000002', 'Mobile')`, tenant, p)
	tok, err := storage.DeviceTokens(ctx, db, tenant, "push", []int64{p})
	if err != nil || len(tok) != 2 || tok[0].Address != "t1" || tok[1].Address != "t2" || tok[0].PersonID != p {
		t.Fatalf("%+v %v", tok, err)
	}
	fax, err := storage.FaxNumbers(ctx, db, tenant, []int64{p})
	if err != nil || len(fax) != 1 || fax[0].Address != "+15550000001" {
		t.Fatalf("%+v %v", fax, err)
	}
	if tok, _ := storage.DeviceTokens(ctx, db, other, "push", []int64{p}); len(tok) != 0 {
		t.Fatal("other tenant reads devices")
	}
	if fax, _ := storage.FaxNumbers(ctx, db, other, []int64{p}); len(fax) != 0 {
		t.Fatal("other tenant reads fax numbers")
	}

	var f int64
	if err := db.GetContext(ctx, &f, `INSERT INTO files (tenant_id, full_name, file_name, kind, content_type, size_bytes, sha256, object_prefix)
		VALUES ($1, 'sirens/tone.wav', 'tone.wav', 'audio', 'audio/wav', 1, 'x', 'p/') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	exec(t, db, `INSERT INTO file_assets (file_id, tenant_id, kind, object_key, content_type, size_bytes, sha256)
		VALUES ($1, $2, 'original', 'p/o', 'audio/wav', 1, 'x'), ($1, $2, 'voice', 'p/v', 'audio/wav', 1, 'x')`, f, tenant)
	for _, name := range []string{"sirens/tone.wav", "tone.wav"} {
		got, err := storage.FileAssetsNamed(ctx, db, tenant, []string{name})
		if err != nil || len(got) != 2 || got[0].FileID != f || got[0].FullName != "sirens/tone.wav" {
			t.Fatalf("%s: %+v %v", name, got, err)
		}
	}
	if got, _ := storage.FileAssetsNamed(ctx, db, other, []string{"tone.wav"}); len(got) != 0 {
		t.Fatal("other tenant reads files")
	}
}
