package delivery

import (
	"context"
	"errors"
	"fmt"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/workflows"
)

type capUpdateInput struct {
	AlertID int64 `path:"alertId" minimum:"1" doc:"The alert id." example:"42"`
	Body    model.CapUpdateRequest
}

// capUpdate numbers the update, then starts the workflow that sends a CAP
// Update or Cancel referencing the alert's delivered CAP messages.
func (h *handlers) capUpdate(ctx context.Context, in *capUpdateInput) (*rest.Output[model.CapUpdateResponse], error) {
	tenant := rest.Tenant(ctx)
	al, err := storage.GetAlert(ctx, h.d.DB, tenant, in.AlertID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("alert")
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	chans, err := h.results.CapChannels(ctx, tenant, al.ID)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if len(chans) == 0 {
		return nil, rest.Conflict("the alert has no delivered CAP message (eas or mobileBroadcast) to update or cancel")
	}
	if in.Body.MsgType != "Update" && in.Body.MsgType != "Cancel" {
		return nil, rest.Invalid("body", "msgType", "must be Update or Cancel", in.Body.MsgType)
	}
	seq, err := h.results.NumberCapUpdate(ctx, tenant, al.ID, string(in.Body.MsgType))
	if errors.Is(err, storage.ErrConflict) {
		return nil, rest.Conflict("another update of the alert is being numbered; try again")
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	id := workflows.CapUpdateWorkflowID(al.WorkflowID, seq)
	// An update or cancellation of an Emergency alert's messages goes on
	// the urgent lane, as the alert did: it must not wait for a slot that
	// NonEmergency deliveries hold.
	o := dispatch.Options(storage.WorkflowStart{TenantID: tenant, WorkflowID: id, Priority: storage.AlertPriority(al.Priority)}, h.d.Config.TemporalTaskQueue)
	_, err = h.d.Temporal.ExecuteWorkflow(ctx, o,
		workflows.SendCapUpdate, activities.CapUpdateInput{
			AlertRef: activities.AlertRef{Tenant: tenant, AlertID: al.ID, Tag: alert.TagOf(tenant, al.ID, al.WorkflowID)}, MsgType: string(in.Body.MsgType), Seq: seq,
			Headline: in.Body.Headline, Description: in.Body.Description, Instruction: in.Body.Instruction, Note: in.Body.Note,
		})
	if err != nil {
		return nil, rest.Unavailable("the workflow service", fmt.Errorf("start %s: %w", id, err))
	}
	return rest.Answer(model.CapUpdateResponse{AlertID: al.ID, MsgType: in.Body.MsgType, Sequence: seq, WorkflowID: id, Channels: chans}), nil
}
