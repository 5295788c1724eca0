package storage_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/results"
)

// TestAlertSenderNamesMigrateToNFC: the from filter of the alert lists
// looks for the sender name in NFC (names.Normal), so the migration puts
// the sender names of the alerts stored before in NFC: an alert whose
// name was sent decomposed is found by the name as the filter takes it.
func TestAlertSenderNamesMigrateToNFC(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	const nfc, nfd = "Zo\u00eb Safety", "Zoe\u0308 Safety"
	var id int64
	if err := db.GetContext(ctx, &id, `INSERT INTO alerts (tenant_id, alert_type, priority, subject, sender_name, channels, settings, status, workflow_id)
		VALUES ($1, 'Default', 'NonEmergency', 'Drill', $2, '{email}', '{}', 'Sent', '') RETURNING id`, tenant, nfd); err != nil {
		t.Fatal(err)
	}

	runMigrationUp(ctx, t, db, "00710_alert_sender_names_nfc.sql")
	for _, from := range []string{nfc, nfd} {
		found, _, err := results.New(db).FindAlerts(ctx, results.AlertFilter{Tenant: tenant, From: names.Normal(from)}, "id", 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 || found[0].ID != id || found[0].SenderName != nfc {
			t.Errorf("alerts from %q: %+v, want alert %d from %q", from, found, id, nfc)
		}
	}
}
