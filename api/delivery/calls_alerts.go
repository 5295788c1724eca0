package delivery

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/storage/results"
)

// alertResults records what calls and CAP updates do to alerts.
type alertResults interface {
	ApplyCall(ctx context.Context, d results.DeliveryRef, c results.CallOutcome) error
	CapChannels(ctx context.Context, tenant string, alertID int64) ([]string, error)
	NumberCapUpdate(ctx context.Context, tenant string, alertID int64, msgType string) (int, error)
}

var _ alertResults = (*results.Store)(nil)

// applyCall carries a call's status into its alert delivery row: an
// answered call is a receipt (Delivered), a press-1 confirmation also
// confirms the recipient, a call that ended without being answered and will
// not be redialled fails the delivery. Calls that are not an alert's
// deliveries (another key shape) change nothing.
func applyCall(ctx context.Context, store alertResults, call voice.Call) error {
	k, err := alert.ParseDeliveryKey(call.Key)
	if err != nil || k.Tenant != call.Tenant {
		return nil
	}
	c := results.CallOutcome{
		Answered:  call.Status == voice.StatusAnswered,
		Confirmed: call.Status == voice.StatusConfirmed,
		Ended:     call.Final(),
		Error:     call.Error, TargetError: "the call ended " + call.Status,
		At: time.Now().UTC(),
	}
	if c.Error == "" {
		c.Error = "the call ended " + call.Status
	}
	return store.ApplyCall(ctx, results.DeliveryRef{Tenant: k.Tenant, AlertID: k.AlertID, Channel: k.Channel, Cycle: k.Cycle, Seq: k.Seq,
		WorkflowID: k.WorkflowID()}, c)
}
