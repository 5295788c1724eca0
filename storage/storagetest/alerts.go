package storagetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/storage"
)

// NewAlert stores a Processing alert of tenant, with empty settings and
// no tag (as alerts stored before tags came), for tests of what is
// recorded against an alert, and returns its id.
func NewAlert(t testing.TB, db *storage.DB, tenant string) int64 {
	t.Helper()
	return NewTaggedAlert(t, db, tenant, "")
}

// NewTaggedAlert is NewAlert with the tag tag: its workflow id is
// alert.WorkflowID of it.
func NewTaggedAlert(t testing.TB, db *storage.DB, tenant, tag string) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if id, err = storage.NextAlertID(ctx, tx); err != nil {
			return err
		}
		return storage.InsertAlert(ctx, tx, &storage.Alert{ID: id, TenantID: tenant, Type: "Notification", Priority: "Normal",
			Subject: "s", Settings: []byte(`{}`), Status: storage.AlertProcessing, WorkflowID: alert.WorkflowID(tenant, id, tag), CreatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// RestoreAlertsBefore does to tenant's alerts what restoring the database
// from a backup taken before alert id was stored does, while Temporal, the
// object store and the providers keep what they saw: the alerts from id on
// and every row about them (in each table with tenant_id and alert_id) are
// gone, and the next alert stored gets id again. The alert id sequence
// serves every tenant, so no other tenant may have alerts from id on.
func RestoreAlertsBefore(t testing.TB, db *storage.DB, tenant string, id int64) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var tables []string
		if err := tx.SelectContext(ctx, &tables, `
			SELECT c.table_name FROM information_schema.columns c
			JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name AND tb.table_type = 'BASE TABLE'
			WHERE c.table_schema = current_schema() AND c.column_name = 'alert_id'
				AND EXISTS (SELECT 1 FROM information_schema.columns x
					WHERE x.table_schema = c.table_schema AND x.table_name = c.table_name AND x.column_name = 'tenant_id')
			ORDER BY 1`); err != nil {
			return err
		}
		for _, tb := range tables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+pq.QuoteIdentifier(tb)+` WHERE tenant_id = $1 AND alert_id >= $2`, tenant, id); err != nil {
				return fmt.Errorf("%s: %w", tb, err)
			}
		}
		var others int
		if err := tx.GetContext(ctx, &others, `SELECT count(*) FROM alerts WHERE tenant_id <> $1 AND id >= $2`, tenant, id); err != nil {
			return err
		}
		if others > 0 {
			return fmt.Errorf("%d alerts of other tenants from id %d on", others, id)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM alerts WHERE tenant_id = $1 AND id >= $2`, tenant, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('alerts', 'id'), $1, false)`, id)
		return err
	})
	if err != nil {
		t.Fatalf("restore alerts before %d: %v", id, err)
	}
}
