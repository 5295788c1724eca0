package storage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"
)

// The types of events tocsin emits to hook subscriptions.
const (
	EventAlertCreated       = "alert.created"
	EventAlertQueued        = "alert.queued"
	EventAlertSent          = "alert.sent"
	EventAlertCompleted     = "alert.completed"
	EventAlertFailed        = "alert.failed"
	EventRecipientResponded = "alert.recipient.responded"
	EventVerificationDone   = "verification.completed"
	EventVerificationFailed = "verification.failed"
	EventFileUploaded       = "file.uploaded"
	EventFileDeleted        = "file.deleted"
	EventSubscriptionTest   = "subscription.test"
)

// Event is a change that hook subscriptions may receive. It is written in the
// same transaction as the change it describes (the outbox), and a dispatcher
// starts its deliveries afterwards, so a crash between the two loses nothing.
type Event struct {
	ID       string          `db:"id"`
	TenantID string          `db:"tenant_id"`
	Type     string          `db:"type"`
	Payload  json.RawMessage `db:"payload"`
}

// EmitEvent records an event of type typ for tenant inside tx and returns its id.
func EmitEvent(ctx context.Context, tx sqlx.ExtContext, tenant, typ string, payload any) (string, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("encode %s event: %w", typ, err)
	}
	id := "evt_" + uuid.NewString()
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO events (id, tenant_id, type, payload) VALUES ($1, $2, $3, $4)`,
		id, tenant, typ, b); err != nil {
		return "", fmt.Errorf("insert %s event: %w", typ, err)
	}
	return id, nil
}
