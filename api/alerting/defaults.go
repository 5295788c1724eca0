package alerting

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
)

// BuiltinDefaults are the defaults of a tenant that has not changed them.
func BuiltinDefaults() model.AlertDefaults {
	return model.AlertDefaults{
		Type:     model.AlertTypeDefault,
		Priority: model.PriorityNonEmergency,
		Channels: []model.DeliveryChannel{"email"},
		Workflow: model.WorkflowSettings{Cycles: 1, CycleIntervalMinutes: 5},
		Sender:   model.SenderSettings{},
	}
}

// defaults reads the tenant's defaults (the built-in ones when it has none).
func (h *handler) defaults(ctx context.Context, tenant string) (model.AlertDefaults, *time.Time, error) {
	raw, updated, err := h.results.Defaults(ctx, tenant)
	if err != nil {
		return model.AlertDefaults{}, nil, rest.Unavailable("the database", err)
	}
	if raw == nil {
		return BuiltinDefaults(), nil, nil
	}
	d := BuiltinDefaults()
	if err := json.Unmarshal(raw, &d); err != nil {
		return BuiltinDefaults(), nil, nil
	}
	return d, updated, nil
}

var priorityOptions = []model.PriorityOption{
	{Priority: model.PriorityEmergency, Name: "Emergency", Description: "Life-safety alerts: devices may sound the loud tone and quiet settings are overridden.", LoudTone: true},
	{Priority: model.PriorityNonEmergency, Name: "Non-emergency", Description: "Informational alerts that respect recipients' quiet settings.", LoudTone: false},
}

type defaultsInput struct {
	Body *model.SingleAlertDefaultsRequest `required:"false"`
}

func (h *handler) getAlertsDefault(ctx context.Context, in *defaultsInput) (*rest.Output[model.SingleAlertDefaultsResponse], error) {
	d, updated, err := h.defaults(ctx, rest.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	if in.Body != nil {
		if in.Body.Type != "" {
			d.Type = in.Body.Type
		}
		if in.Body.Priority != "" {
			if in.Body.Priority != d.Priority {
				d.LoudTone = in.Body.Priority == model.PriorityEmergency
			}
			d.Priority = in.Body.Priority
		}
		if d.Type == model.AlertTypePoll {
			d.Workflow.ConfirmationRequested = false
		}
	}
	return &rest.Output[model.SingleAlertDefaultsResponse]{Body: model.SingleAlertDefaultsResponse{
		Defaults: d, PriorityOptions: priorityOptions, ScheduleTypes: []model.ScheduleType{model.ScheduleNow, model.ScheduleLater},
		Customized: updated != nil, UpdatedAt: updated,
	}}, nil
}

type updateDefaultsInput struct {
	Body model.AlertDefaults
}

func (h *handler) updateAlertsDefault(ctx context.Context, in *updateDefaultsInput) (*rest.Output[model.SingleAlertDefaultsResponse], error) {
	d := in.Body
	seen := map[model.DeliveryChannel]bool{}
	for i, c := range d.Channels {
		if seen[c] {
			return nil, rest.Invalid("body", "channels", "channel "+string(c)+" is listed twice", i)
		}
		seen[c] = true
	}
	if d.LoudTone && d.Priority != model.PriorityEmergency {
		return nil, rest.Invalid("body", "loudTone", "the loud tone is for Emergency alerts only", true)
	}
	if d.Workflow.Cycles == 0 {
		d.Workflow.Cycles = 1
	}
	if d.Workflow.CycleIntervalMinutes == 0 {
		d.Workflow.CycleIntervalMinutes = 5
	}
	b, _ := json.Marshal(d)
	if err := h.results.SaveDefaults(ctx, rest.Tenant(ctx), b); err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	return h.getAlertsDefault(ctx, &defaultsInput{})
}
