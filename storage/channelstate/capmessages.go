package channelstate

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/storage"
)

// CAPMessage is a CAP document tocsin sent.
type CAPMessage struct {
	Tenant     string    `db:"tenant_id"`
	Identifier string    `db:"identifier"`
	AlertID    *int64    `db:"alert_id"`
	Channel    string    `db:"channel"`
	Sender     string    `db:"sender"`
	Sent       time.Time `db:"sent"`
	MsgType    string    `db:"msg_type"`
	Refs       string    `db:"refs"`
	Document   string    `db:"document"`
	Status     string    `db:"status"`
	Error      string    `db:"error"`
}

// CAPMessages is the PostgreSQL record of CAP documents (cap_messages).
type CAPMessages struct {
	DB *storage.DB
}

// Record stores m; a message with the same identifier gets m's document,
// status and error.
func (s *CAPMessages) Record(ctx context.Context, m CAPMessage) error {
	_, err := s.DB.ExecContext(ctx, `
		INSERT INTO cap_messages (tenant_id, identifier, alert_id, channel, sender, sent, msg_type, refs, document, status, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (tenant_id, identifier) DO UPDATE SET document = excluded.document, status = excluded.status, error = excluded.error`,
		m.Tenant, m.Identifier, m.AlertID, m.Channel, m.Sender, m.Sent, m.MsgType, m.Refs, m.Document, m.Status, m.Error)
	if err != nil {
		return fmt.Errorf("record CAP message: %w", err)
	}
	return nil
}

// ForAlert returns the CAP messages of the tenant's alert on channel, oldest first.
func (s *CAPMessages) ForAlert(ctx context.Context, tenant string, alertID int64, channel string) ([]CAPMessage, error) {
	var out []CAPMessage
	err := s.DB.SelectContext(ctx, &out, `SELECT tenant_id, identifier, alert_id, channel, sender, sent, msg_type, refs, document, status, error
		FROM cap_messages WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 ORDER BY sent, created_at`, tenant, alertID, channel)
	if err != nil {
		return nil, fmt.Errorf("list CAP messages: %w", err)
	}
	return out, nil
}
