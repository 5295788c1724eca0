package storage_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestBatchSkipsOnlyWhomItsTenantReachedEarlier: in sequential order a
// recipient reached on an earlier channel is read with Skip set, and only
// the alert's own tenant's deliveries count.
func TestBatchSkipsOnlyWhomItsTenantReachedEarlier(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	id := storagetest.NewTaggedAlert(t, db, tenant, "abcdefgh")
	for _, q := range []string{
		`INSERT INTO alert_recipients (tenant_id, alert_id, seq, email) VALUES ($1, $2, 1, 'a@example.com'), ($1, $2, 2, 'b@example.com'), ($1, $2, 3, 'c@example.com')`,
		`INSERT INTO alert_deliveries (tenant_id, alert_id, channel, cycle, seq, status) VALUES ($1, $2, 'email', 1, 1, 'Sent'), ($1, $2, 'email', 1, 3, 'Failed')`,
	} {
		if _, err := db.ExecContext(ctx, q, tenant, id); err != nil {
			t.Fatal(err)
		}
	}
	// A row of another tenant under the alert's id is not the alert's.
	if _, err := db.ExecContext(ctx, `INSERT INTO alert_deliveries (tenant_id, alert_id, channel, cycle, seq, status) VALUES ($1, $2, 'email', 1, 2, 'Delivered')`, other, id); err != nil {
		t.Fatal(err)
	}
	recs, err := storage.BatchRecipients(ctx, db, storage.BatchKey{Tenant: tenant, AlertID: id, Tag: "abcdefgh", Channel: "text", Cycle: 1, Hi: 3}, []string{"email"})
	if err != nil {
		t.Fatal(err)
	}
	skip := map[int64]bool{}
	for _, r := range recs {
		skip[r.Seq] = r.Skip
	}
	if len(recs) != 3 || !skip[1] || skip[2] || skip[3] {
		t.Fatalf("skipped %v of %d recipients, want only 1 (reached by email) of 3", skip, len(recs))
	}
}
