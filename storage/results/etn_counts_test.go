package results_test

import (
	"context"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/results"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// etnStatusCounts counts an alert's ETN targets by status from the targets
// themselves, as the kept counts must say.
func etnStatusCounts(t *testing.T, db *storage.DB, tenant string, alertID int64) alert.Totals {
	t.Helper()
	var c alert.Totals
	if err := db.GetContext(context.Background(), &c, `SELECT count(*) AS total,
			count(*) FILTER (WHERE status = 'Pending') AS pending, count(*) FILTER (WHERE status = 'Retrying') AS retrying,
			count(*) FILTER (WHERE status = 'Sent') AS sent, count(*) FILTER (WHERE status = 'Delivered') AS delivered,
			count(*) FILTER (WHERE status = 'Failed') AS failed
		FROM alert_etn_targets WHERE tenant_id = $1 AND alert_id = $2`, tenant, alertID); err != nil {
		t.Fatal(err)
	}
	return c
}

// seedEtnTargets stores n targets of an alert with one INSERT, as the first
// batch stores the numbers inside the alert's areas; the status of target i
// is statuses[i % len(statuses)].
func seedEtnTargets(t *testing.T, db *storage.DB, tenant string, alertID int64, n int, statuses ...string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), `INSERT INTO alert_etn_targets (tenant_id, alert_id, seq, phone, source, name, latitude, longitude, status)
		SELECT $1, $2, i, '+1555' || lpad(i::text, 7, '0'), 'points', 'Point ' || i, 45, -122, ($4::text[])[1 + i % cardinality($4::text[])]
		FROM generate_series(1, $3::int) AS i`, tenant, alertID, n, pq.StringArray(statuses)); err != nil {
		t.Fatal(err)
	}
}

// TestEtnCountsFollowTheTargets: the counts an area ETN alert keeps of its
// numbers by status, which its results page, its results and its count on
// etn read, stay what counting the numbers gives as the first batch stores
// them, a page of calls is recorded (and recorded again, changing only the
// attempts), call statuses that overtook the recording are applied,
// callbacks end calls and a restore removes the alert; and another
// tenant's alert of the same id is not counted.
func TestEtnCountsFollowTheTargets(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	theirs := newAlert(t, db, other, storage.Alert{Subject: "Theirs", Channels: pq.StringArray{"etn"}})
	seedEtnTargets(t, db, other, theirs.ID, 7, "Pending")
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Areas", Channels: pq.StringArray{"etn"}})
	check := func(step string, want alert.Totals) {
		t.Helper()
		got, err := storage.EtnTargetTotals(ctx, db, tenant, al.ID)
		if err != nil || got != want {
			t.Errorf("%s: counts %+v, want %+v: %v", step, got, want, err)
		}
		if counted := etnStatusCounts(t, db, tenant, al.ID); counted != want {
			t.Errorf("%s: the targets count %+v, want %+v", step, counted, want)
		}
		own, err := storage.AlertTotals(ctx, db, al)
		if err != nil || len(own) != 1 || own[0] != want {
			t.Errorf("%s: the alert's totals %+v, want %+v: %v", step, own, want, err)
		}
	}
	check("no targets", alert.Totals{})
	seedEtnTargets(t, db, tenant, al.ID, 6, "Pending")
	check("stored", alert.Totals{Total: 6, Pending: 6})

	targets := &channelstate.AlertETNTargets{DB: db}
	head := "alert-" + tenant + "-wf"
	calls := []channelstate.ETNCallResult{
		{Seq: 1, Status: storage.DeliverySent}, {Seq: 2, Status: storage.DeliverySent},
		{Seq: 3, Status: storage.DeliveryRetrying}, {Seq: 4, Status: storage.DeliveryFailed, Error: "bad number"},
	}
	if err := targets.RecordCalls(ctx, tenant, al.ID, head, calls); err != nil {
		t.Fatal(err)
	}
	check("a page of calls recorded", alert.Totals{Total: 6, Pending: 2, Retrying: 1, Sent: 2, Failed: 1})
	if err := targets.RecordCalls(ctx, tenant, al.ID, head, calls); err != nil {
		t.Fatal(err)
	}
	check("recorded again", alert.Totals{Total: 6, Pending: 2, Retrying: 1, Sent: 2, Failed: 1})

	// A call's final status that arrived before its request was recorded.
	if _, err := db.ExecContext(ctx, `INSERT INTO voice_calls (tenant_id, call_key, channel, alert_id, recipient, message, status)
		VALUES ($1, $3, 'etn', $2, '+15550000005', '{}', 'Answered')`, tenant, al.ID, head+":etn:1:5"); err != nil {
		t.Fatal(err)
	}
	if err := targets.RecordCalls(ctx, tenant, al.ID, head, []channelstate.ETNCallResult{{Seq: 5, Status: storage.DeliverySent}}); err != nil {
		t.Fatal(err)
	}
	check("an early status applied", alert.Totals{Total: 6, Pending: 1, Retrying: 1, Sent: 2, Delivered: 1, Failed: 1})

	for seq, outcome := range map[int64]results.CallOutcome{
		1: {Answered: true, At: time.Now()},
		2: {Ended: true, Error: "busy", TargetError: "the call ended busy", At: time.Now()},
	} {
		if err := s.ApplyCall(ctx, results.DeliveryRef{Tenant: tenant, AlertID: al.ID, Channel: "etn", Cycle: 1, Seq: seq}, outcome); err != nil {
			t.Fatal(err)
		}
	}
	check("calls ended", alert.Totals{Total: 6, Pending: 1, Retrying: 1, Delivered: 2, Failed: 2})
	if c, err := storage.EtnTargetTotals(ctx, db, other, al.ID); err != nil || c.Total != 0 {
		t.Errorf("another tenant reads the counts of the alert's id: %+v %v", c, err)
	}

	// A restore takes the alert, its numbers and their counts: an alert
	// given its id again counts only its own.
	storagetest.RestoreAlertsBefore(t, db, tenant, al.ID)
	check("restored before the alert", alert.Totals{})
	again := newAlert(t, db, tenant, storage.Alert{Subject: "Areas again", Channels: pq.StringArray{"etn"}})
	if again.ID != al.ID {
		t.Fatalf("the new alert is %d, not %d", again.ID, al.ID)
	}
	seedEtnTargets(t, db, tenant, al.ID, 2, "Pending")
	check("the id's next alert", alert.Totals{Total: 2, Pending: 2})
	if c := etnStatusCounts(t, db, other, theirs.ID); c.Total != 7 {
		t.Fatalf("the other tenant's alert: %+v", c)
	}
	if c, err := storage.EtnTargetTotals(ctx, db, other, theirs.ID); err != nil || c != etnStatusCounts(t, db, other, theirs.ID) {
		t.Fatalf("the other tenant's counts %+v %v", c, err)
	}
}

// TestEtnPageReadsOnlyTheTargetsItShows: for an area ETN alert that calls
// 200,000 numbers, the statements of its results page (run under EXPLAIN
// ANALYZE) read the counts by status without reading a number, and the page
// reads no more numbers than it reaches; the counts are the targets'.
func TestEtnPageReadsOnlyTheTargetsItShows(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	const targets = 200_000
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Areas", Channels: pq.StringArray{"etn", "social"}})
	seedEtnTargets(t, db, tenant, al.ID, targets, "Pending", "Sent", "Delivered", "Failed", "Retrying", "Delivered")
	neighbour := newAlert(t, db, other, storage.Alert{Subject: "Neighbour", Channels: pq.StringArray{"etn"}})
	seedEtnTargets(t, db, other, neighbour.ID, targets/2, "Delivered")
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE alert_etn_targets, alert_etn_counts`); err != nil {
		t.Fatal(err)
	}

	want := etnStatusCounts(t, db, tenant, al.ID)
	if c, err := storage.EtnTargetTotals(ctx, db, tenant, al.ID); err != nil || c != want || c.Total != targets {
		t.Fatalf("counts %+v, want %+v: %v", c, want, err)
	}
	for _, page := range []struct{ limit, offset int }{{500, 0}, {25, 10_000}} {
		plans, err := s.ExplainEtnPage(ctx, tenant, al.ID, page.limit, page.offset)
		if err != nil {
			t.Fatal(err)
		}
		for what, most := range map[string]int{"counts": 0, "own": 0, "page": page.offset + page.limit} {
			if read, seqScans := storagetest.RowsRead(t, plans[what], "alert_etn_targets"); read > most || seqScans > 0 {
				t.Errorf("page %+v, %s: %d targets read (at most %d), %d full scans:\n%s", page, what, read, most, seqScans, plans[what])
			}
		}
	}
}
