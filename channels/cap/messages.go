package cap

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Message is a CAP document tocsin sent.
type Message = channelstate.CAPMessage

// MessageStore keeps CAP messages (channelstate.CAPMessages).
type MessageStore interface {
	Record(ctx context.Context, m Message) error
	ForAlert(ctx context.Context, tenant string, alertID int64, channel string) ([]Message, error)
}

var _ MessageStore = (*channelstate.CAPMessages)(nil)

// Messages is the PostgreSQL record of CAP documents.
type Messages struct {
	DB *storage.DB
}

var _ Log = (*Messages)(nil)

func (m *Messages) store() MessageStore { return &channelstate.CAPMessages{DB: m.DB} }

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
	return m.store().Record(ctx, Message{Tenant: tenant, Identifier: a.Identifier, AlertID: alertID, Channel: string(ch),
		Sender: a.Sender, Sent: sent, MsgType: a.MsgType, Refs: a.References, Document: string(doc), Status: status, Error: msg})
}

// ForAlert returns the CAP messages of the tenant's alert on ch, oldest first.
func (m *Messages) ForAlert(ctx context.Context, tenant string, alertID int64, ch channels.Channel) ([]Message, error) {
	return m.store().ForAlert(ctx, tenant, alertID, string(ch))
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
			refs = append(refs, Ref{Sender: msg.Sender, Identifier: msg.Identifier, Sent: msg.Sent})
		}
	}
	return refs, nil
}
