package activities

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/storage"
)

// CapUpdateInput asks for an Update or Cancel of an alert's CAP messages.
type CapUpdateInput struct {
	AlertRef
	// MsgType is Update or Cancel.
	MsgType string
	// Seq numbers the alert's updates; it makes the delivery keys.
	Seq                                      int
	Headline, Description, Instruction, Note string
}

// CapUpdateOutcome lists the channels the update went out on.
type CapUpdateOutcome struct {
	Sent, Failed []string
}

// DeliverCapUpdate sends an Update or Cancel CAP message on each CAP
// channel (EAS, mobile broadcast) the alert was sent on, referencing every
// message of the alert delivered there. Channels without a delivered
// message are left out. Nothing is sent for an alert whose id is another
// alert's now (its renderer may still be kept from before the restore).
func (a *Activities) DeliverCapUpdate(ctx context.Context, in CapUpdateInput) (CapUpdateOutcome, error) {
	var out CapUpdateOutcome
	if err := a.checkAlert(ctx, in.AlertRef); err != nil {
		return out, err
	}
	r, err := a.rendererFor(ctx, in.AlertRef)
	if err != nil {
		return out, err
	}
	log := &cap.Messages{DB: a.DB}
	for _, ch := range cap.Channels {
		refs, err := log.References(ctx, in.Tenant, in.AlertID, ch)
		if err != nil {
			return out, err
		}
		if len(refs) == 0 {
			continue
		}
		m, _ := r.Message(string(ch), &storage.RecipientRow{}, "")
		if in.Headline != "" {
			m.Subject = in.Headline
		}
		if in.Description != "" {
			m.Text = in.Description
		}
		ci := cap.InputOf(r.Renderer, &m)
		ci.MsgType, ci.References, ci.Note, ci.Instruction = in.MsgType, refs, in.Note, in.Instruction
		m.Options = cap.Options{Input: ci}
		m.Key = fmt.Sprintf("%s:%s:cap-%s-%d", alert.WorkflowID(in.Tenant, in.AlertID, in.Tag), ch, in.MsgType, in.Seq)
		m.To = string(ch)
		res, err := a.send(ctx, BatchInput{AlertRef: in.AlertRef, Channel: string(ch)}, []channels.Message{m})
		if err != nil {
			return out, fmt.Errorf("send %s %s: %w", ch, in.MsgType, err)
		}
		switch {
		case len(res) == 1 && (res[0].Outcome == channels.Sent || res[0].Outcome == channels.Delivered):
			out.Sent = append(out.Sent, string(ch))
		case len(res) == 1 && !res[0].Permanent:
			return out, fmt.Errorf("send %s %s: %s", ch, in.MsgType, res[0].Error)
		default:
			out.Failed = append(out.Failed, string(ch))
		}
	}
	return out, nil
}
