package alerting

import (
	"context"
	"errors"

	"github.com/jmoiron/sqlx"
	"go.temporal.io/api/serviceerror"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/hooks/events"
	"github.com/tocsin/tocsin/storage"
)

const cancelDoc = "Cancels an alert that waits for its send time (status Scheduled): in one transaction it becomes Cancelled, completedAt is set and alert.cancelled is emitted; " +
	"then its SendAlert workflow is cancelled (or its start withdrawn), so its timer does not fire. Nothing of a cancelled alert is sent, even when the workflow could not be reached: " +
	"at its send time the workflow finds the alert Cancelled and ends. Cancelling a Cancelled alert answers its status again (200). " +
	"An alert whose send time came (Queued, Processing, Sent or Failed) cannot be cancelled: 409."

type cancelInput struct {
	ID   int64                     `path:"id" doc:"The alert id."`
	Body *model.CancelAlertRequest `required:"false"`
}

func (h *handler) cancelAlert(ctx context.Context, in *cancelInput) (*rest.Output[model.SingleAlertStatusResponse], error) {
	tenant := rest.Tenant(ctx)
	al, _, err := h.loadAlert(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	reason := ""
	if in.Body != nil {
		reason = in.Body.Reason
	}
	detail := "cancelled by " + rest.Caller(ctx).Subject
	if reason != "" {
		detail += ": " + reason
	}
	status := al.Status
	err = h.d.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		moved, err := storage.TransitionAlert(ctx, tx, tenant, al.ID, []string{storage.AlertScheduled}, storage.AlertCancelled, detail)
		if err != nil {
			return err
		}
		if !moved {
			status, err = storage.AlertStatus(ctx, tx, tenant, al.ID)
			return err
		}
		status = storage.AlertCancelled
		if _, err := storage.MarkAlertCompleted(ctx, tx, tenant, al.ID); err != nil {
			return err
		}
		if _, err := storage.CancelStart(ctx, tx, tenant, al.WorkflowID); err != nil {
			return err
		}
		_, err = storage.EmitEvent(ctx, tx, tenant, storage.EventAlertCancelled, events.AlertCancelled{
			Alert: events.AlertOf(al, storage.AlertCancelled), CancelledBy: rest.Caller(ctx).Subject, Reason: reason,
		})
		return err
	})
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if status != storage.AlertCancelled {
		return nil, rest.Conflict("the alert is " + status + ": only a Scheduled alert can be cancelled, before its send time")
	}
	// The workflow waits on its timer; cancelling it ends the wait. Should
	// Temporal not answer, the workflow ends at the send time by itself.
	if err := h.d.Temporal.CancelWorkflow(ctx, al.WorkflowID, ""); err != nil {
		var gone *serviceerror.NotFound
		if !errors.As(err, &gone) {
			h.d.Logger.Warn("cancel alert workflow", "alert", al.ID, "workflow", al.WorkflowID, "err", err)
		}
	}
	return h.getAlertsByIDStatus(ctx, &idInput{ID: al.ID})
}
