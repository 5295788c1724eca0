package results_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/fax"
	"github.com/tocsin/tocsin/channels/sms"
	"github.com/tocsin/tocsin/channels/teamchat"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/results"
)

// newAlert writes an alert of tenant with three recipients (the first two
// mandatory, the third without an email address) in batches of two.
func newAlert(t *testing.T, db *storage.DB, tenant string, a storage.Alert) *storage.Alert {
	t.Helper()
	ctx := context.Background()
	id, err := storage.NextAlertID(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	a.ID, a.TenantID, a.WorkflowID, a.CreatedAt = id, tenant, "wf", time.Now().UTC()
	if a.Type == "" {
		a.Type, a.Priority, a.Status = "Default", "NonEmergency", storage.AlertQueued
	}
	if a.Channels == nil {
		a.Channels = pq.StringArray{"email", "voice"}
	}
	a.Settings = []byte(`{}`)
	if err := db.InTx(ctx, func(tx *sqlx.Tx) error { return storage.InsertAlert(ctx, tx, &a) }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE alerts SET batch_size = 2, recipient_count = 3, resolved_at = now() WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO alert_recipients (tenant_id, alert_id, seq, person_id, first_name, last_name, email, phone, voice_phone, is_mandatory)
		VALUES ($1, $2, 1, 11, 'Ada', 'Lovelace', 'ada@example.com', '+15550001', '+15550001', true),
		       ($1, $2, 2, 12, 'Alan', 'Turing', 'alan@example.com', NULL, '+15550002', true),
		       ($1, $2, 3, NULL, 'Grace', 'Hopper', NULL, '+15550003', NULL, false)`, tenant, id); err != nil {
		t.Fatal(err)
	}
	// As storage.ResolveRecipients records them.
	if _, err := db.ExecContext(ctx, `UPDATE alerts SET resolved_at = now(), recipient_count = 3 WHERE tenant_id = $1 AND id = $2`, tenant, id); err != nil {
		t.Fatal(err)
	}
	return &a
}

// respondedEvents counts the tenant's recipient.responded events.
func respondedEvents(t *testing.T, db *storage.DB, tenant string) int {
	t.Helper()
	var n int
	if err := db.GetContext(context.Background(), &n, `SELECT count(*) FROM events WHERE tenant_id = $1 AND type = $2`,
		tenant, storage.EventRecipientResponded); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFindAlertsFiltersAndScopes(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	a := newAlert(t, db, tenant, storage.Alert{Subject: "Fire 100% drill", CreatedBy: "me"})
	b := newAlert(t, db, tenant, storage.Alert{Subject: "Flood", CreatedBy: "you", FacilityNames: pq.StringArray{"North Plant"}})
	newAlert(t, db, tenant, storage.Alert{Subject: "Secret", CreatedBy: "you", Restricted: true})
	newAlert(t, db, tenant, storage.Alert{Subject: "Hidden", CreatedBy: "me", Hidden: true})
	newAlert(t, db, other, storage.Alert{Subject: "Fire", CreatedBy: "me"})
	order := results.AlertSorting.Default + ", " + results.AlertSorting.TieBreak

	find := func(f results.AlertFilter) []int64 {
		t.Helper()
		f.Tenant, f.Caller = tenant, "me"
		rows, total, err := s.FindAlerts(ctx, f, order, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if total != storage.ExactTotal(int64(len(rows))) {
			t.Fatalf("total %+v for %d rows", total, len(rows))
		}
		ids := []int64{}
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		return ids
	}
	if got := find(results.AlertFilter{}); len(got) != 2 || got[0] != b.ID || got[1] != a.ID {
		t.Fatalf("visible alerts %v, want %d, %d", got, b.ID, a.ID)
	}
	if got := find(results.AlertFilter{Subject: "100%"}); len(got) != 1 || got[0] != a.ID {
		t.Fatalf("subject 100%%: %v", got)
	}
	if got := find(results.AlertFilter{Subject: "1_0"}); len(got) != 0 {
		t.Fatalf("_ is not a wildcard: %v", got)
	}
	if got := find(results.AlertFilter{FacilityName: "north plant"}); len(got) != 1 || got[0] != b.ID {
		t.Fatalf("facility: %v", got)
	}
	if got := find(results.AlertFilter{Hidden: true}); len(got) != 1 {
		t.Fatalf("hidden: %v", got)
	}
	if got := find(results.AlertFilter{StatusSets: [][]string{{storage.AlertQueued}, {storage.AlertSent}}}); len(got) != 0 {
		t.Fatalf("every status set must hold: %v", got)
	}
	past := time.Now().Add(-time.Hour)
	if got := find(results.AlertFilter{CreatedBy: "me", After: &past, BySentAt: true}); len(got) != 1 || got[0] != a.ID {
		t.Fatalf("sent by me in the last hour: %v", got)
	}
	if got := find(results.AlertFilter{Before: &past}); len(got) != 0 {
		t.Fatalf("created before an hour ago: %v", got)
	}
}

func TestDefaultsPerTenant(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	if d, at, err := s.Defaults(ctx, tenant); err != nil || d != nil || at != nil {
		t.Fatalf("no defaults: %s %v %v", d, at, err)
	}
	for _, v := range []string{`{"type": "Poll"}`, `{"type": "Default"}`} {
		if err := s.SaveDefaults(ctx, tenant, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if d, at, err := s.Defaults(ctx, tenant); err != nil || string(d) != `{"type": "Default"}` || at == nil {
		t.Fatalf("defaults: %s %v %v", d, at, err)
	}
	if d, _, _ := s.Defaults(ctx, other); d != nil {
		t.Fatal("another tenant reads the defaults")
	}
}

func TestRecipientsDeliveriesAndAnswers(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Poll"})
	newAlert(t, db, other, storage.Alert{Subject: "Other"})
	k := storage.BatchKey{Tenant: tenant, AlertID: al.ID, Channel: "email", Cycle: 1, Lo: 0, Hi: 2}
	if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		if err := storage.RecordDeliveries(ctx, tx, k, []storage.DeliveryRow{
			{Seq: 1, Address: "ada@example.com", Status: storage.DeliverySent},
			{Seq: 2, Address: "alan@example.com", Status: storage.DeliveryFailed, Error: "bounced"},
		}); err != nil {
			return err
		}
		k.Cycle = 2
		return storage.RecordDeliveries(ctx, tx, k, []storage.DeliveryRow{{Seq: 2, Address: "alan@example.com", Status: storage.DeliverySent}})
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []results.Response{
		{Tenant: tenant, AlertID: al.ID, Seq: 1, Question: 1, Option: 2, OptionText: "Yes", At: time.Now()},
		{Tenant: tenant, AlertID: al.ID, Seq: 2},
	} {
		if r.At.IsZero() {
			r.At = time.Now()
		}
		if _, _, err := s.Respond(ctx, r); err != nil {
			t.Fatal(err)
		}
	}

	order := results.RecipientSorting.Columns["lastname"] + " DESC, " + results.RecipientSorting.TieBreak
	all, total, err := s.Recipients(ctx, results.RecipientFilter{Tenant: tenant, AlertID: al.ID}, order, 2, 0)
	if err != nil || total != storage.ExactTotal(3) || len(all) != 2 || all[0].LastName != "Turing" || all[1].LastName != "Lovelace" {
		t.Fatalf("recipients by last name descending: %+v %+v %v", total, all, err)
	}
	yes := false
	if rows, total, _ := s.Recipients(ctx, results.RecipientFilter{Tenant: tenant, AlertID: al.ID, Mandatory: &yes}, "r.seq", 10, 0); total != storage.ExactTotal(1) || rows[0].Seq != 3 {
		t.Fatalf("not mandatory: %+v", rows)
	}
	if rows, total, _ := s.Recipients(ctx, results.RecipientFilter{Tenant: tenant, AlertID: al.ID, PollOptionID: 2, Name: "ada love"}, "r.seq", 10, 0); total != storage.ExactTotal(1) || rows[0].Seq != 1 {
		t.Fatalf("chose option 2 named ada love: %+v", rows)
	}
	if _, total, _ := s.Recipients(ctx, results.RecipientFilter{Tenant: other, AlertID: al.ID}, "r.seq", 10, 0); total != storage.ExactTotal(0) {
		t.Fatal("another tenant reads the recipients")
	}
	r, err := s.Recipient(ctx, tenant, al.ID, 2)
	if err != nil || r.ConfirmedAt == nil || r.RespondedAt != nil || *r.PersonID != 12 {
		t.Fatalf("recipient 2 confirmed: %+v %v", r, err)
	}
	if _, err := s.Recipient(ctx, other, al.ID, 2); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another tenant's recipient: %v", err)
	}
	if r, err := s.FirstRecipient(ctx, tenant, al.ID); err != nil || r.Seq != 1 || r.Email == nil {
		t.Fatalf("first recipient %+v %v", r, err)
	}
	if rs, err := s.RecipientsBySeq(ctx, tenant, al.ID, []int64{1, 3}); err != nil || len(rs) != 2 {
		t.Fatalf("by seq %+v %v", rs, err)
	}
	chs := []channels.Descriptor{email.Descriptor, sms.Descriptor, voice.Descriptor, fax.Descriptor, teamchat.Descriptor}
	if c, err := s.RecipientCounts(ctx, tenant, al.ID, chs); err != nil || c.Total != 3 || c.AdHoc != 1 || fmt.Sprint(c.PerChannel) != "[2 2 2 0 0]" {
		t.Fatalf("counts %+v %v", c, err)
	}
	if c, err := s.RecipientCounts(ctx, other, al.ID, chs); err != nil || c.Total != 0 {
		t.Fatalf("another tenant counts the recipients: %+v %v", c, err)
	}
	if c, resp, err := s.ResponseCounts(ctx, tenant, al.ID); err != nil || c != 2 || resp != 1 {
		t.Fatalf("confirmed %d responded %d %v", c, resp, err)
	}
	if oc, err := s.OptionCounts(ctx, tenant, al.ID); err != nil || len(oc) != 1 || oc[0] != (results.OptionCount{Question: 1, Option: 2, Count: 1}) {
		t.Fatalf("option counts %+v %v", oc, err)
	}
	if as, err := s.Answers(ctx, tenant, al.ID, []int64{1, 2}); err != nil || len(as) != 1 || as[0].Seq != 1 || as[0].Via != "link" {
		t.Fatalf("answers %+v %v", as, err)
	}
	if as, confirmed, err := s.RecipientAnswers(ctx, tenant, al.ID, 1); err != nil || len(as) != 1 || !confirmed {
		t.Fatalf("answers of 1: %+v %v %v", as, confirmed, err)
	}
	if ok, _ := s.HasRecipient(ctx, tenant, al.ID, 3); !ok {
		t.Fatal("recipient 3 is missing")
	}
	if ok, _ := s.HasRecipient(ctx, other, al.ID, 3); ok {
		t.Fatal("another tenant has recipient 3")
	}

	st, err := s.LatestStatuses(ctx, tenant, al.ID, []int64{1, 2})
	if err != nil || len(st) != 2 || st[0] != (results.SeqStatus{Seq: 1, Status: "Sent"}) || st[1] != (results.SeqStatus{Seq: 2, Status: "Sent"}) {
		t.Fatalf("latest statuses %+v %v", st, err)
	}
	ds, err := s.RecipientDeliveries(ctx, tenant, al.ID, 2)
	if err != nil || len(ds) != 2 || ds[0].Cycle != 1 || ds[0].Error != "bounced" || ds[1].Cycle != 2 {
		t.Fatalf("deliveries of 2: %+v %v", ds, err)
	}
	page, total, err := s.ChannelDeliveries(ctx, tenant, al.ID, "email", 2, 1)
	if err != nil || total != storage.ExactTotal(3) || len(page) != 2 || page[0].Seq != 2 || page[0].Cycle != 1 || page[1].Cycle != 2 {
		t.Fatalf("email page 2: %+v %+v %v", total, page, err)
	}
	if _, total, _ := s.ChannelDeliveries(ctx, other, al.ID, "email", 10, 0); total != storage.ExactTotal(0) {
		t.Fatal("another tenant reads the deliveries")
	}
	if n := respondedEvents(t, db, tenant); n != 2 {
		t.Fatalf("%d responded events", n)
	}
}

func TestReceiptsAndCallsRecountTheirBatch(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Calls"})
	for _, ch := range []string{"email", "voice"} {
		k := storage.BatchKey{Tenant: tenant, AlertID: al.ID, Channel: ch, Cycle: 1, Lo: 2, Hi: 4}
		if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			return storage.RecordDeliveries(ctx, tx, k, []storage.DeliveryRow{{Seq: 3, Address: "x", Status: storage.DeliverySent}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	counts := func(ch string) storage.ChannelCounts {
		t.Helper()
		cs, err := storage.AlertChannelCounts(ctx, db, tenant, al.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Channel == ch {
				return c
			}
		}
		return storage.ChannelCounts{}
	}
	// A receipt or call status for the alert that had this id before a
	// restore (its key names another workflow) changes nothing.
	earlier := results.DeliveryRef{Tenant: tenant, AlertID: al.ID, Channel: "email", Cycle: 1, Seq: 3,
		WorkflowID: "alert-" + tenant + "-" + strconv.FormatInt(al.ID, 10)}
	if ok, err := s.ApplyReceipt(ctx, earlier, results.Receipt{Delivered: true, At: time.Now()}); err != nil || ok {
		t.Fatalf("the earlier alert's receipt: %v %v", ok, err)
	}
	earlier.Channel = "voice"
	if err := s.ApplyCall(ctx, earlier, results.CallOutcome{Answered: true, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if c, v := counts("email"), counts("voice"); c.Delivered != 0 || c.Sent != 1 || v.Delivered != 0 {
		t.Fatalf("after the earlier alert's reports: email %+v voice %+v", c, v)
	}
	ref := results.DeliveryRef{Tenant: tenant, AlertID: al.ID, Channel: "email", Cycle: 1, Seq: 3, WorkflowID: "wf"}
	if ok, err := s.ApplyReceipt(ctx, ref, results.Receipt{Delivered: true, At: time.Now(), ProviderMessageID: "p1"}); err != nil || !ok {
		t.Fatalf("receipt: %v %v", ok, err)
	}
	if c := counts("email"); c.Delivered != 1 || c.Sent != 0 {
		t.Fatalf("email counts %+v", c)
	}
	if ok, _ := s.ApplyReceipt(ctx, results.DeliveryRef{Tenant: other, AlertID: al.ID, Channel: "email", Cycle: 1, Seq: 3},
		results.Receipt{Error: "x"}); ok {
		t.Fatal("another tenant's receipt applied")
	}
	if ok, _ := s.ApplyReceipt(ctx, ref, results.Receipt{Error: "late failure"}); ok {
		t.Fatal("a failure receipt downgraded a delivered delivery")
	}

	call := results.DeliveryRef{Tenant: tenant, AlertID: al.ID, Channel: "voice", Cycle: 1, Seq: 3}
	for range 2 {
		if err := s.ApplyCall(ctx, call, results.CallOutcome{Answered: true, Confirmed: true, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if c := counts("voice"); c.Delivered != 1 {
		t.Fatalf("voice counts %+v", c)
	}
	if r, _ := s.Recipient(ctx, tenant, al.ID, 3); r.ConfirmedAt == nil {
		t.Fatal("the call's confirmation did not confirm the recipient")
	}
	if n := respondedEvents(t, db, tenant); n != 1 {
		t.Fatalf("%d responded events for two confirmations", n)
	}
}

// TestTheSameResponseAgainChangesNothing: through the link, a first
// confirmation and each new answer are recorded with an event; the same
// response again keeps the time of the first and emits nothing, as a
// second confirmation by call emits nothing.
func TestTheSameResponseAgainChangesNothing(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	s := results.New(db)
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Poll"})
	first := time.Now().UTC().Truncate(time.Millisecond)
	respond := func(seq int64, question, option int, at time.Time) {
		t.Helper()
		if _, _, err := s.Respond(ctx, results.Response{Tenant: tenant, AlertID: al.ID, Seq: seq, Question: question, Option: option, At: at}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		respond(2, 0, 0, first.Add(time.Duration(i)*time.Minute))
	}
	if n := respondedEvents(t, db, tenant); n != 1 {
		t.Fatalf("%d responded events for one confirmation given three times", n)
	}
	if r, _ := s.Recipient(ctx, tenant, al.ID, 2); r.ConfirmedAt == nil || !r.ConfirmedAt.Equal(first) {
		t.Fatalf("confirmed at %v, want %v", r.ConfirmedAt, first)
	}
	for i := range 3 {
		respond(1, 1, 2, first.Add(time.Duration(i)*time.Minute))
	}
	if n := respondedEvents(t, db, tenant); n != 2 {
		t.Fatalf("%d responded events after one answer given three times", n)
	}
	if r, _ := s.Recipient(ctx, tenant, al.ID, 1); r.RespondedAt == nil || !r.RespondedAt.Equal(first) {
		t.Fatalf("responded at %v, want %v", r.RespondedAt, first)
	}
	// Another answer counts, with its time; giving it again does not.
	changed := first.Add(time.Hour)
	respond(1, 1, 3, changed)
	respond(1, 1, 3, changed.Add(time.Minute))
	if n := respondedEvents(t, db, tenant); n != 3 {
		t.Fatalf("%d responded events after a changed answer given twice", n)
	}
	if as, _, err := s.RecipientAnswers(ctx, tenant, al.ID, 1); err != nil || len(as) != 1 || as[0].Option != 3 || !as[0].At.Equal(changed) {
		t.Fatalf("answers %+v %v", as, err)
	}
}

// A link spends its allowance of answer changes at once and regains one
// change per AnswerChangeInterval, up to AnswerChangeBurst; time passing is
// played by moving the time the allowance is whole again.
func TestALinkRegainsAnswerChangesOverTime(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	s := results.New(db)
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Poll"})
	option := 1
	flip := func() error {
		_, _, err := s.Respond(ctx, results.Response{Tenant: tenant, AlertID: al.ID, Seq: 1, Question: 1, Option: 3 - option, At: time.Now().UTC()})
		if err == nil {
			option = 3 - option
		}
		return err
	}
	flips := func(n int) {
		t.Helper()
		for i := range n {
			if err := flip(); err != nil {
				t.Fatalf("change %d of %d: %v", i+1, n, err)
			}
		}
		var limited *results.ChangeLimitedError
		if err := flip(); !errors.As(err, &limited) || limited.RetryAfter <= 0 || limited.RetryAfter > results.AnswerChangeInterval {
			t.Fatalf("change %d of %d: %v", n+1, n, err)
		}
	}
	pass := func(d time.Duration) {
		t.Helper()
		if _, err := db.ExecContext(ctx, `UPDATE alert_recipients SET answer_changes_full_at = answer_changes_full_at - make_interval(secs => $3)
			WHERE alert_id = $1 AND seq = $2`, al.ID, 1, d.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
	if err := flip(); err != nil {
		t.Fatalf("first answer: %v", err)
	}
	flips(results.AnswerChangeBurst)
	pass(results.AnswerChangeInterval)
	flips(1)
	pass(results.AnswerChangeBurst * results.AnswerChangeInterval)
	flips(results.AnswerChangeBurst)
	if n, want := respondedEvents(t, db, tenant), 1+2*results.AnswerChangeBurst+1; n != want {
		t.Fatalf("%d responded events, want %d", n, want)
	}
	if as, _, err := s.RecipientAnswers(ctx, tenant, al.ID, 1); err != nil || len(as) != 1 || as[0].Option != option {
		t.Fatalf("answers %+v %v, want option %d", as, err, option)
	}
}

func TestSharedDeliveriesAndEtnTargets(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Areas", Channels: pq.StringArray{"etn", "social"}})
	if _, err := db.ExecContext(ctx, `INSERT INTO alert_broadcasts (tenant_id, alert_id, channel, cycle, destination, destination_name, status, idempotency_key)
		VALUES ($1, $2, 'social', 1, 'acct-1', 'Town page', 'Delivered', 'k1'), ($1, $2, 'social', 1, 'acct-2', '', 'Failed', 'k2')`, tenant, al.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO alert_etn_targets (tenant_id, alert_id, seq, phone, source, person_id, name, latitude, longitude, status)
		VALUES ($1, $2, 1, '+15550001', 'people', 11, 'Ada', 1, 2, 'Sent'), ($1, $2, 2, '+15559999', 'points', NULL, 'Well', 1, 2, 'Pending')`, tenant, al.ID); err != nil {
		t.Fatal(err)
	}
	ada := int64(11)
	head := "alert-" + tenant + "-" + strconv.FormatInt(al.ID, 10) + "-abcdefgh"
	ds, err := s.SharedDeliveries(ctx, tenant, al.ID, head, []string{"social"}, true, &ada)
	if err != nil || len(ds) != 3 || ds[0].Channel != "etn" || ds[0].Key != head+":etn:1:1" ||
		ds[1].Address != "Town page" || ds[2].Address != "acct-2" {
		t.Fatalf("shared deliveries %+v %v", ds, err)
	}
	if ds, _ := s.SharedDeliveries(ctx, tenant, al.ID, head, []string{"social"}, false, &ada); len(ds) != 2 {
		t.Fatalf("without etn areas: %+v", ds)
	}
	own, err := storage.AlertTotals(ctx, db, al) // channels etn, social
	if err != nil || len(own) != 2 || own[0] != (alert.Totals{Total: 2, Sent: 1, Pending: 1}) || own[1] != (alert.Totals{Total: 2, Delivered: 1, Failed: 1}) {
		t.Fatalf("own row counts %+v %v", own, err)
	}
	if c, err := storage.EtnTargetTotals(ctx, db, tenant, al.ID); err != nil || c.Total != 2 || c.Pending != 1 {
		t.Fatalf("etn counts %+v %v", c, err)
	}
	if c, _ := storage.EtnTargetTotals(ctx, db, other, al.ID); c.Total != 0 {
		t.Fatal("another tenant counts the targets")
	}
	if ts, err := s.EtnTargets(ctx, tenant, al.ID, 1, 1); err != nil || len(ts) != 1 || ts[0].First != "Well" || ts[0].Last != "" {
		t.Fatalf("etn targets page 2: %+v %v", ts, err)
	}

	call := results.DeliveryRef{Tenant: tenant, AlertID: al.ID, Channel: "etn", Cycle: 1, Seq: 1}
	if err := s.ApplyCall(ctx, call, results.CallOutcome{Ended: true, Error: "busy", TargetError: "the call ended busy", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if ts, _ := s.EtnTargets(ctx, tenant, al.ID, 1, 0); ts[0].Status != "Failed" || ts[0].Error != "the call ended busy" {
		t.Fatalf("target after a failed call %+v", ts[0])
	}
}

func TestCapUpdatesAreNumberedPerAlert(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	s := results.New(db)
	al := newAlert(t, db, tenant, storage.Alert{Subject: "CAP"})
	if _, err := db.ExecContext(ctx, `INSERT INTO cap_messages (tenant_id, identifier, alert_id, channel, sender, sent, msg_type, document, status)
		VALUES ($1, 'a', $2, 'eas', 's', now(), 'Alert', '<alert/>', 'Sent'), ($1, 'b', $2, 'mobileBroadcast', 's', now(), 'Alert', '<alert/>', 'Failed')`,
		tenant, al.ID); err != nil {
		t.Fatal(err)
	}
	if chans, err := s.CapChannels(ctx, tenant, al.ID); err != nil || len(chans) != 1 || chans[0] != "eas" {
		t.Fatalf("cap channels %v %v", chans, err)
	}
	if chans, _ := s.CapChannels(ctx, other, al.ID); len(chans) != 0 {
		t.Fatal("another tenant reads the cap channels")
	}
	for want := 1; want <= 2; want++ {
		if seq, err := s.NumberCapUpdate(ctx, tenant, al.ID, "Update"); err != nil || seq != want {
			t.Fatalf("update %d numbered %d, %v", want, seq, err)
		}
	}
	hist, err := s.StatusHistory(ctx, tenant, al.ID)
	if err != nil || len(hist) != 1 || hist[0].Status != storage.AlertQueued {
		t.Fatalf("status history %+v %v", hist, err)
	}
}

// TestLargeAlertTotals: the recipients and a channel's deliveries of an
// alert with more than storage.CountLimit of them are counted exactly
// without a filter, from the counts kept with them; a filter matching as
// many counts no further than the limit and says so.
func TestLargeAlertTotals(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	s := results.New(db)
	const n = storage.CountLimit + 50
	var list int64
	if err := db.GetContext(ctx, &list, `WITH p AS (
			INSERT INTO people (tenant_id, first_name, last_name) SELECT $1, 'P', 'L' || i FROM generate_series(1, $2::int) i RETURNING id),
		l AS (INSERT INTO distribution_lists (tenant_id, name) VALUES ($1, 'all') RETURNING id),
		m AS (INSERT INTO distribution_list_members (tenant_id, list_id, person_id) SELECT $1, l.id, p.id FROM l, p)
		SELECT id FROM l`, tenant, n); err != nil {
		t.Fatal(err)
	}
	al := newAlert(t, db, tenant, storage.Alert{Subject: "Everyone"})
	rows := make([]storage.DeliveryRow, n)
	for i := range rows {
		rows[i] = storage.DeliveryRow{Seq: int64(i + 1), Address: fmt.Sprintf("p%d@example.com", i), Status: storage.DeliverySent}
	}
	if err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE alerts SET resolved_at = NULL WHERE id = $1`, al.ID); err != nil {
			return err
		}
		if _, err := storage.ResolveRecipients(ctx, tx, tenant, al.ID, storage.RecipientSpec{RecipientSpec: alert.RecipientSpec{ListIDs: []int64{list}}}); err != nil {
			return err
		}
		return storage.RecordDeliveries(ctx, tx, storage.BatchKey{Tenant: tenant, AlertID: al.ID, Channel: "email", Cycle: 1, Lo: 0, Hi: n}, rows)
	}); err != nil {
		t.Fatal(err)
	}
	if page, total, err := s.Recipients(ctx, results.RecipientFilter{Tenant: tenant, AlertID: al.ID}, "r.seq", 25, 0); err != nil || total != storage.ExactTotal(n) || len(page) != 25 {
		t.Fatalf("recipients: %d of %+v, %v", len(page), total, err)
	}
	no := false
	if page, total, err := s.Recipients(ctx, results.RecipientFilter{Tenant: tenant, AlertID: al.ID, Mandatory: &no}, "r.seq", 25, 0); err != nil || total != (storage.Total{N: storage.CountLimit}) || len(page) != 25 {
		t.Fatalf("recipients through lists: %d of %+v, %v", len(page), total, err)
	}
	if page, total, err := s.ChannelDeliveries(ctx, tenant, al.ID, "email", 25, 0); err != nil || total != storage.ExactTotal(n) || len(page) != 25 {
		t.Fatalf("email deliveries: %d of %+v, %v", len(page), total, err)
	}
	if page, total, err := s.ChannelDeliveries(ctx, tenant, al.ID, "voice", 25, 0); err != nil || total != storage.ExactTotal(0) || len(page) != 0 {
		t.Fatalf("voice deliveries: %d of %+v, %v", len(page), total, err)
	}
}
