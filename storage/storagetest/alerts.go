package storagetest

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// NewAlert stores a Processing alert of tenant, with empty settings, for
// tests of what is recorded against an alert, and returns its id.
func NewAlert(t testing.TB, db *storage.DB, tenant string) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		if id, err = storage.NextAlertID(ctx, tx); err != nil {
			return err
		}
		return storage.InsertAlert(ctx, tx, &storage.Alert{ID: id, TenantID: tenant, Type: "Notification", Priority: "Normal",
			Subject: "s", Settings: []byte(`{}`), Status: storage.AlertProcessing, WorkflowID: "wf", CreatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}
