package storage_test

import (
	"errors"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestStatementsByTagLeaveAnotherAlertOfTheID: what an alert's workflow
// reads and changes names the alert by id and tag, so an alert given the
// id again after a database restore (another tag; a tagged alert for an
// untagged name, or the reverse) is ErrAlertIDReused and left as it is,
// while the alert of the tag is read and changed.
func TestStatementsByTagLeaveAnotherAlertOfTheID(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	tagged := storagetest.NewTaggedAlert(t, db, tenant, "abcdefgh")
	legacy := storagetest.NewAlert(t, db, tenant)
	batch := func(id int64, tag string) storage.BatchKey {
		return storage.BatchKey{Tenant: tenant, AlertID: id, Tag: tag, Channel: "email", Cycle: 1, Lo: 0, Hi: 4}
	}

	for _, c := range []struct {
		name string
		id   int64
		tag  string
	}{
		{"another tag", tagged, "bcdefghi"},
		{"no tag for a tagged alert", tagged, ""},
		{"a tag for an alert without one", legacy, "abcdefgh"},
	} {
		if _, err := storage.GetTaggedAlert(ctx, db, tenant, c.id, c.tag); !errors.Is(err, storage.ErrAlertIDReused) {
			t.Errorf("%s: read %v", c.name, err)
		}
		if err := storage.CheckAlert(ctx, db, tenant, c.id, c.tag); !errors.Is(err, storage.ErrAlertIDReused) {
			t.Errorf("%s: check %v", c.name, err)
		}
		if err := storage.StartCycle(ctx, db, tenant, c.id, c.tag, 3); !errors.Is(err, storage.ErrAlertIDReused) {
			t.Errorf("%s: start cycle %v", c.name, err)
		}
		if _, err := storage.BatchRecipients(ctx, db, batch(c.id, c.tag), nil); !errors.Is(err, storage.ErrAlertIDReused) {
			t.Errorf("%s: batch recipients %v", c.name, err)
		}
		if err := storage.SaveBatchProgress(ctx, db, batch(c.id, c.tag), []byte(`{"sent":[{"s":1}]}`)); err != nil {
			t.Fatal(err)
		}
		if p, err := storage.BatchProgress(ctx, db, batch(c.id, c.tag)); err != nil || p != nil {
			t.Errorf("%s: progress saved for another alert: %s %v", c.name, p, err)
		}
		if al, err := storage.GetAlert(ctx, db, tenant, c.id); err != nil || al.CurrentCycle != 0 {
			t.Errorf("%s: the alert changed: %+v %v", c.name, al, err)
		}
	}

	for _, c := range []struct {
		id  int64
		tag string
	}{{tagged, "abcdefgh"}, {legacy, ""}} {
		if al, err := storage.GetTaggedAlert(ctx, db, tenant, c.id, c.tag); err != nil || al.ID != c.id {
			t.Errorf("alert %d of tag %q: %+v %v", c.id, c.tag, al, err)
		}
		if err := storage.CheckAlert(ctx, db, tenant, c.id, c.tag); err != nil {
			t.Errorf("check alert %d of tag %q: %v", c.id, c.tag, err)
		}
		if err := storage.StartCycle(ctx, db, tenant, c.id, c.tag, 2); err != nil {
			t.Errorf("start cycle of alert %d: %v", c.id, err)
		}
		if recs, err := storage.BatchRecipients(ctx, db, batch(c.id, c.tag), nil); err != nil || len(recs) != 0 {
			t.Errorf("batch recipients of alert %d: %v %v", c.id, recs, err)
		}
		if err := storage.SaveBatchProgress(ctx, db, batch(c.id, c.tag), []byte(`{"sent":[{"s":1}]}`)); err != nil {
			t.Fatal(err)
		}
		if p, err := storage.BatchProgress(ctx, db, batch(c.id, c.tag)); err != nil || p == nil {
			t.Errorf("progress of alert %d: %s %v", c.id, p, err)
		}
		if al, err := storage.GetAlert(ctx, db, tenant, c.id); err != nil || al.CurrentCycle != 2 {
			t.Errorf("alert %d: %+v %v", c.id, al, err)
		}
	}

	// An alert that is not there (or is another tenant's) is not found.
	for _, c := range []struct {
		tenant string
		id     int64
	}{{tenant, legacy + 1000}, {other, tagged}} {
		if _, err := storage.GetTaggedAlert(ctx, db, c.tenant, c.id, "abcdefgh"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("alert %d of tenant %s: %v", c.id, c.tenant, err)
		}
		if err := storage.CheckAlert(ctx, db, c.tenant, c.id, ""); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("check alert %d of tenant %s: %v", c.id, c.tenant, err)
		}
		if _, err := storage.BatchRecipients(ctx, db, storage.BatchKey{Tenant: c.tenant, AlertID: c.id, Tag: "abcdefgh", Channel: "email", Cycle: 1, Hi: 4}, nil); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("batch of alert %d of tenant %s: %v", c.id, c.tenant, err)
		}
	}
}
