package activities

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// deliverEtnArea calls every number inside an alert's areas: the first
// batch of the first cycle stores the targets (once) and calls those
// without a final status in pages, recording each call on its target row.
func (a *Activities) deliverEtnArea(ctx context.Context, in BatchInput, r *alertRenderer, lastAttempt bool) (BatchOutcome, error) {
	var out BatchOutcome
	if in.Lo != 0 || in.Cycle != 1 {
		return out, nil
	}
	// r may be a renderer kept from before a restore.
	if err := a.checkAlert(ctx, in.AlertRef); err != nil {
		return out, err
	}
	rows, lists := etn.Targets(r.Settings)
	targetStore := a.etnTargets()
	err := targetStore.StoreOnce(ctx, in.Tenant, in.AlertID, rows, lists)
	if err != nil {
		return out, err
	}
	temporary := 0
	var after int64
	for {
		targets, err := targetStore.Unfinished(ctx, in.Tenant, in.AlertID, after, 100)
		if err != nil {
			return out, err
		}
		if len(targets) == 0 {
			break
		}
		msgs := make([]channels.Message, len(targets))
		for i, t := range targets {
			m, _ := r.Message(in.Channel, &storage.RecipientRow{FirstName: t.Name, VoicePhone: &targets[i].Phone}, "")
			r.options(&m)
			m.Key = alert.DeliveryKey(in.Tenant, in.AlertID, in.Tag, in.Channel, in.Cycle, t.Seq)
			m.To = t.Phone
			msgs[i] = m
			after = t.Seq
		}
		results, err := a.send(ctx, in, msgs)
		if err != nil && !lastAttempt {
			return out, fmt.Errorf("deliver etn: %w", err)
		}
		calls := make([]channelstate.ETNCallResult, len(targets))
		at := alert.Attempt{Last: lastAttempt, Max: in.MaxAttempts}
		for i, t := range targets {
			res := alert.ResultAt(results, err, i)
			o := alert.StatusOf(res, at)
			calls[i] = channelstate.ETNCallResult{Seq: t.Seq, Status: o.Status, ProviderMessageID: res.ProviderMessageID, Error: o.Error}
			switch o.Status {
			case alert.DeliverySent, alert.DeliveryDelivered:
				out.Sent++
			case alert.DeliveryFailed:
				out.Failed++
			default:
				out.Retrying++
				temporary++
			}
		}
		if err := targetStore.RecordCalls(ctx, in.Tenant, in.AlertID, alert.WorkflowID(in.Tenant, in.AlertID, in.Tag), calls); err != nil {
			return out, err
		}
	}
	if temporary > 0 {
		return out, fmt.Errorf("%d temporary failures on etn", temporary)
	}
	return out, nil
}

// etnTargetStore keeps the numbers an ETN alert calls (channelstate.AlertETNTargets).
type etnTargetStore interface {
	StoreOnce(ctx context.Context, tenant string, alertID int64, areas []alert.Place, lists []string) error
	Unfinished(ctx context.Context, tenant string, alertID, after int64, limit int) ([]channelstate.AlertETNTarget, error)
	RecordCalls(ctx context.Context, tenant string, alertID int64, keyHead string, res []channelstate.ETNCallResult) error
}

var _ etnTargetStore = (*channelstate.AlertETNTargets)(nil)

func (a *Activities) etnTargets() etnTargetStore { return &channelstate.AlertETNTargets{DB: a.DB} }
