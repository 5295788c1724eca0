package alerting

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/emailaddr"
)

// BuiltinDefaults are the defaults of a tenant that has not changed them.
func BuiltinDefaults() model.AlertDefaults {
	return model.AlertDefaults{
		Type:     model.AlertTypeDefault,
		Priority: model.PriorityNonEmergency,
		Channels: []model.DeliveryChannel{"email"},
		Workflow: model.WorkflowSettings{Cycles: ptr(1), CycleIntervalMinutes: ptr(5)},
		Sender:   model.SenderSettings{},
	}
}

// fillRule says how defaults fill an alert (applyDefaults); the defaults
// operations and README say it.
const fillRule = "Defaults fill what an alert leaves out, field by field: an object the alert gives (priority, workflow, sender) keeps every field it gives and takes the default's value of each field it leaves out, at every depth; any other value the alert gives (a string, number, boolean or list; \"\", 0 and false too) wins whole. So workflow {\"cycles\": 2} keeps the default confirmationRequested and cycleIntervalMinutes, and workflow {\"confirmationRequested\": false} turns a default confirmation off. The default channels are a list: they enable their channels only for an alert without a channels block. The default loud tone sounds only for an alert whose priority is Emergency and that gives no priority.loudTone."

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
	// Defaults stored before updateAlertsDefault checked them may hold
	// what no alert can be served by: the built-in values stand in.
	if d.Type != model.AlertTypeDefault {
		d.Type = model.AlertTypeDefault
	}
	if len(d.Channels) == 0 {
		d.Channels = BuiltinDefaults().Channels
	}
	// So may a sender name or Reply-To stored before the rules for them:
	// every alert leaving the sender out would be refused, naming a field
	// its caller never gave. Such a value is left out (the platform's From
	// name and no Reply-To stand), and a name the rule takes is read in
	// NFC, as updateAlertsDefault would store it.
	if n := d.Sender.Name; n != nil {
		if name, err := checkSenderName(*n); err != nil {
			d.Sender.Name = nil
		} else {
			*n = name
		}
	}
	if a := d.Sender.ReplyTo; a != nil && *a != "" {
		if addr, err := emailaddr.Normalize(*a); err != nil {
			d.Sender.ReplyTo = nil
		} else {
			*a = addr
		}
	}
	return d, updated, nil
}

// checkDefaults refuses defaults that could not serve every alert that
// leaves out what they fill, and keeps the sender's Reply-To in its one
// spelling, as an alert's (checkSender); the schema has checked the rest
// (channel names and count, workflow bounds, the caller id).
func checkDefaults(d *model.AlertDefaults) error {
	if d.Type != model.AlertTypeDefault {
		needs := map[model.AlertType]string{
			model.AlertTypePoll:       "a Poll alert needs its survey questions",
			model.AlertTypeConference: "a Conference alert needs its conference invitation",
		}[d.Type]
		return rest.Invalid("body", "type", "defaults hold type Default only ("+needs+", which defaults do not hold); give the type with the alert", d.Type)
	}
	if len(d.Channels) == 0 {
		return rest.Invalid("body", "channels", "give at least one channel", nil)
	}
	seen := map[model.DeliveryChannel]bool{}
	for i, c := range d.Channels {
		if seen[c] {
			return rest.Invalid("body", fmt.Sprintf("channels[%d]", i), "channel "+string(c)+" is listed twice", c)
		}
		seen[c] = true
	}
	if d.LoudTone && d.Priority != model.PriorityEmergency {
		return rest.Invalid("body", "loudTone", "the loud tone is for Emergency alerts only", true)
	}
	if n := d.Sender.Name; n != nil {
		name, err := checkSenderName(*n)
		if err != nil {
			return rest.Invalid("body", "sender.name", err.Error(), *n)
		}
		*n = name
	}
	if a := d.Sender.ReplyTo; a != nil && *a != "" {
		addr, err := emailaddr.Normalize(*a)
		if err != nil {
			return rest.Invalid("body", "sender.replyTo", err.Error(), *a)
		}
		*a = addr
	}
	return nil
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

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
			d.Workflow.ConfirmationRequested = nil
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
	if err := checkDefaults(&d); err != nil {
		return nil, err
	}
	if d.Workflow.Cycles == nil {
		d.Workflow.Cycles = ptr(1)
	}
	if d.Workflow.CycleIntervalMinutes == nil {
		d.Workflow.CycleIntervalMinutes = ptr(5)
	}
	b, _ := json.Marshal(d)
	if err := h.results.SaveDefaults(ctx, rest.Tenant(ctx), b); err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	return h.getAlertsDefault(ctx, &defaultsInput{})
}
