package activities_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// alertState is what an alert's workflow may change of it, as read back.
func alertState(t *testing.T, db *storage.DB, tenant string, id int64) string {
	t.Helper()
	ctx := context.Background()
	al, err := storage.GetAlert(ctx, db, tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := storagetest.AlertDeliveries(ctx, db, tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := storagetest.TenantEvents(ctx, db, tenant)
	if err != nil {
		t.Fatal(err)
	}
	var broadcasts []string
	for _, ch := range []string{"eas", "etn"} {
		b, err := storage.FinishedBroadcasts(ctx, db, tenant, id, ch, 1)
		if err != nil {
			t.Fatal(err)
		}
		broadcasts = append(broadcasts, b...)
	}
	return fmt.Sprintf("status %s (%q) cycle %d batch %d recipients %d sent %v failed %v completed %v; deliveries %+v; %d events; broadcasts %v",
		al.Status, al.Error, al.CurrentCycle, al.BatchSize, al.RecipientCount, al.SentAt, al.FailedAt, al.CompletedAt, ds, len(evs), broadcasts)
}

// TestActivitiesOfAnAlertBeforeARestoreLeaveTheNewAlertOfItsID: the
// database is restored from a backup taken before an alert was stored,
// while its workflow still runs (on the same worker, which keeps the
// alert's renderer), and a new alert gets its id. Every activity of the
// earlier alert's workflow then ends with the non-retryable error of type
// ErrTypeAlertIDReused: it sends nothing and the new alert's status, rows
// and deliveries stay as they are; the new alert's own activities go on.
func TestActivitiesOfAnAlertBeforeARestoreLeaveTheNewAlertOfItsID(t *testing.T) {
	t.Parallel()
	db := stacktest.DB(t)
	tenant := stacktest.NewTenant()
	ctx := context.Background()
	snd := &recordingSender{}
	a := &activities.Activities{DB: db, Senders: channels.Senders{channels.Text: snd, channels.Etn: snd, channels.Voice: snd,
		channels.Eas: snd, channels.MobileBroadcast: snd}}
	settings := func(body string) alert.Settings {
		return alert.Settings{Type: alert.TypeDefault, Message: alert.MessageSettings{Subject: "S", Body: body},
			Channels:   &alert.Channels{Text: &alert.TextMessageChannel{Enabled: true}, Etn: &alert.EtnChannel{Enabled: true}},
			Recipients: alert.Recipients{Areas: []alert.SelectedArea{{Center: &alert.LatLng{Lat: 41, Lng: -87}, RadiusMeters: 1000}}}}
	}
	batch := func(ref activities.AlertRef, ch string, lo int64) activities.BatchInput {
		return activities.BatchInput{AlertRef: ref, Channel: ch, Cycle: 1, Lo: lo, Hi: lo + 1, MaxAttempts: 3}
	}

	// The earlier alert's first batch went out, so the worker keeps its
	// renderer; then the database is restored to before it.
	oldID := storeTaggedAlert(t, db, tenant, "beforeaa", settings("Before the restore."), nil,
		[]alert.AdHocRecipient{{FirstName: "Bea", Phone: "+15550103001"}})
	old := activities.AlertRef{Tenant: tenant, AlertID: oldID, Tag: "beforeaa"}
	if _, err := a.PrepareAlert(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeliverBatch(ctx, batch(old, "text", 0)); err != nil {
		t.Fatal(err)
	}
	storagetest.RestoreAlertsBefore(t, db, tenant, oldID)
	newID := storeAlert(t, db, tenant, settings("After the restore."), nil,
		[]alert.AdHocRecipient{{FirstName: "Abe", Phone: "+15550103002"}, {FirstName: "Cy", Phone: "+15550103003"}})
	if newID != oldID {
		t.Fatalf("the new alert has id %d, not %d", newID, oldID)
	}
	ref := activities.AlertRef{Tenant: tenant, AlertID: newID, Tag: testTag}
	if _, err := a.PrepareAlert(ctx, ref); err != nil {
		t.Fatal(err)
	}
	// Its first batch went out, its second has yet to.
	if _, err := a.DeliverBatch(ctx, batch(ref, "text", 0)); err != nil {
		t.Fatal(err)
	}
	snd.msgs = nil
	before := alertState(t, db, tenant, newID)

	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"PrepareAlert", func() error { _, err := a.PrepareAlert(ctx, old); return err }},
		{"StartCycle", func() error { return a.StartCycle(ctx, activities.CycleInput{AlertRef: old, Cycle: 2}) }},
		{"DeliverBatch text", func() error { _, err := a.DeliverBatch(ctx, batch(old, "text", 1)); return err }},
		{"DeliverBatch etn", func() error { _, err := a.DeliverBatch(ctx, batch(old, "etn", 0)); return err }},
		{"DeliverBatch eas", func() error { _, err := a.DeliverBatch(ctx, batch(old, "eas", 0)); return err }},
		{"RedialCalls", func() error { _, err := a.RedialCalls(ctx, old); return err }},
		{"DeliverCapUpdate", func() error {
			_, err := a.DeliverCapUpdate(ctx, activities.CapUpdateInput{AlertRef: old, MsgType: "Cancel", Seq: 1})
			return err
		}},
		{"FinishFirstCycle", func() error { _, err := a.FinishFirstCycle(ctx, old); return err }},
		{"CompleteAlert", func() error { return a.CompleteAlert(ctx, old) }},
		{"FailAlert", func() error { return a.FailAlert(ctx, activities.FailAlertInput{AlertRef: old, Reason: "stopped"}) }},
	} {
		err := c.run()
		var app *temporal.ApplicationError
		if !activities.IsAlertIDReused(err) || !errors.As(err, &app) || !app.NonRetryable() {
			t.Errorf("%s of the earlier alert: %v; want a non-retryable error of type %s", c.name, err, activities.ErrTypeAlertIDReused)
		}
		if after := alertState(t, db, tenant, newID); after != before {
			t.Errorf("%s of the earlier alert changed the new one:\n%s\nwas\n%s", c.name, after, before)
			before = after
		}
		if len(snd.msgs) != 0 {
			t.Errorf("%s of the earlier alert sent %+v", c.name, snd.msgs)
			snd.msgs = nil
		}
	}

	// The new alert's own workflow goes on.
	if status, err := a.FinishFirstCycle(ctx, ref); err != nil || status != storage.AlertSent {
		t.Fatalf("the new alert's first cycle: %s %v", status, err)
	}
}
