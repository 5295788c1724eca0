package cap

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
)

// Message is a CAP document tocsin sent.
type Message struct {
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

// Ref returns the reference to m.
func (m Message) Ref() Ref { return Ref{Sender: m.Sender, Identifier: m.Identifier, Sent: m.Sent} }

// Messages is the PostgreSQL record of CAP documents.
type Messages struct {
	DB *storage.DB
}

var _ Log = (*Messages)(nil)

// Record implements Log.
func (m *Messages) Record(ctx context.Context, tenant string, alertID *int64, ch channels.Channel, a *Alert, doc []byte, sendErr error) error {
	sent, err := time.Parse(TimeLayout, a.Sent)
	if err != nil {
		return fmt.Errorf("sent time: %w", err)
	}
	status, msg := "Sent", ""
	if sendErr != nil {
		status, msg = "Failed", sendErr.Error()
	}
	_, err = m.DB.ExecContext(ctx, `
		INSERT INTO cap_messages (tenant_id, identifier, alert_id, channel, sender, sent, msg_type, refs, document, status, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (tenant_id, identifier) DO UPDATE SET document = excluded.document, status = excluded.status, error = excluded.error`,
		tenant, a.Identifier, alertID, string(ch), a.Sender, sent, a.MsgType, a.References, string(doc), status, msg)
	if err != nil {
		return fmt.Errorf("record CAP message: %w", err)
	}
	return nil
}

// ForAlert returns the CAP messages of the tenant's alert on ch, oldest first.
func (m *Messages) ForAlert(ctx context.Context, tenant string, alertID int64, ch channels.Channel) ([]Message, error) {
	var out []Message
	err := m.DB.SelectContext(ctx, &out, `SELECT tenant_id, identifier, alert_id, channel, sender, sent, msg_type, refs, document, status, error
		FROM cap_messages WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 ORDER BY sent, created_at`, tenant, alertID, string(ch))
	if err != nil {
		return nil, fmt.Errorf("list CAP messages: %w", err)
	}
	return out, nil
}

// References returns the references an Update or Cancel of the alert's
// messages on ch carries: every message that was delivered.
func (m *Messages) References(ctx context.Context, tenant string, alertID int64, ch channels.Channel) ([]Ref, error) {
	msgs, err := m.ForAlert(ctx, tenant, alertID, ch)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, msg := range msgs {
		if msg.Status == "Sent" {
			refs = append(refs, msg.Ref())
		}
	}
	return refs, nil
}
