package alerting

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/results"
)

// list answers a page of the tenant's alerts matching f. Restricted alerts
// of other users are left out. With bySentAt, f.After and f.Before bound
// the sending time (the creation time of an alert not sent yet).
func (h *handler) list(ctx context.Context, f model.FindAlertRequest, pp rest.PageParams, bySentAt bool) (*model.PagedAlertSettingsResponse, error) {
	order, err := rest.SortBy(pp.Sort, results.AlertSorting)
	if err != nil {
		return nil, err
	}
	caller := rest.Caller(ctx)
	q := results.AlertFilter{
		Tenant: caller.Tenant, Caller: caller.Subject, IDs: f.IDs, Types: strs(f.Types), Priorities: strs(f.Priorities),
		Subject: f.Subject, From: names.Normal(f.From), Incident: f.Incident, FacilityName: f.FacilityName, CreatedBy: f.CreatedBy,
		Hidden: f.Hidden != nil && *f.Hidden, After: utc(f.After), Before: utc(f.Before), BySentAt: bySentAt,
	}
	if len(f.Statuses) > 0 {
		q.StatusSets = append(q.StatusSets, strs(f.Statuses))
	}
	if len(f.Completion) > 0 {
		var st []string
		for _, c := range f.Completion {
			switch c {
			case model.SentStatusSent:
				st = append(st, storage.AlertSent)
			case model.SentStatusFailed:
				st = append(st, storage.AlertFailed)
			case model.SentStatusCancelled:
				st = append(st, storage.AlertCancelled)
			case model.SentStatusProcessing:
				st = append(st, storage.AlertScheduled, storage.AlertQueued, storage.AlertProcessing)
			}
		}
		q.StatusSets = append(q.StatusSets, st)
	}
	rows, total, err := h.results.FindAlerts(ctx, q, order, pp.Limit(), pp.Offset())
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	out := &model.PagedAlertSettingsResponse{Paging: rest.NewPaging(pp, total), Items: []model.AlertSummary{}}
	for _, a := range rows {
		out.Items = append(out.Items, model.AlertSummary{
			ID: a.ID, Type: model.AlertType(a.Type), Priority: model.PriorityType(a.Priority), Subject: a.Subject,
			Status: model.AlertStatus(a.Status), SentStatus: model.SentStatusOf(model.AlertStatus(a.Status)),
			From: a.SenderName, Incident: a.IncidentName, FacilityNames: append([]string{}, a.FacilityNames...),
			Channels: channelsOf(a.Channels), Hidden: a.Hidden, CreatedBy: a.CreatedBy, RecipientCount: a.RecipientCount,
			CreatedAt: a.CreatedAt, ScheduledFor: a.ScheduledFor, SentAt: a.SentAt, CompletedAt: a.CompletedAt,
		})
	}
	return out, nil
}

func strs[T ~string](v []T) []string {
	if len(v) == 0 {
		return nil
	}
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}

type findInput struct {
	rest.PageParams
	Body *model.FindAlertRequest `required:"false"`
}

func (h *handler) findAlerts(ctx context.Context, in *findInput) (*rest.Output[*model.PagedAlertSettingsResponse], error) {
	f := model.FindAlertRequest{}
	if in.Body != nil {
		f = *in.Body
	}
	res, err := h.list(ctx, f, in.PageParams, false)
	if err != nil {
		return nil, err
	}
	return rest.Answer(res), nil
}

type sentInput struct {
	rest.PageParams
	After           string   `query:"after" maxLength:"40" doc:"Sent at or after this date (YYYY-MM-DD, UTC) or time (RFC 3339). An alert not sent yet counts with its creation time." example:"2024-11-01"`
	Before          string   `query:"before" maxLength:"40" doc:"Sent before this date (YYYY-MM-DD: before that day starts, UTC) or time (RFC 3339)." example:"2024-12-01"`
	AlertCompletion []string `query:"alertCompletion" enum:"Sent,Processing,Failed,Cancelled" maxItems:"4" doc:"Completion states, comma-separated."`
	AlertType       string   `query:"alertType" enum:"Default,Poll,Conference"`
	FacilityName    string   `query:"facilityName" maxLength:"200" doc:"A facility of the alert has this name (case-insensitive)."`
	Hidden          bool     `query:"hidden" doc:"true: only hidden alerts; false (default): only visible ones."`
	Incident        string   `query:"incident" maxLength:"200" doc:"Incident name contains this (case-insensitive)."`
	MessagePriority string   `query:"messagepriority" enum:"Emergency,NonEmergency"`
	Subject         string   `query:"subject" maxLength:"200" doc:"Subject contains this (case-insensitive)."`
	From            string   `query:"from" maxLength:"100" doc:"Sender name contains this (case-insensitive)."`
}

// utc is t in UTC. RFC 3339 allows offsets up to ±23:59 and PostgreSQL
// takes at most ±15:59, so a time a client gives reaches SQL in UTC.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func parseDate(field, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return utc(&t), nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return &t, nil
	}
	return nil, rest.Invalid("query", field, "not a date (YYYY-MM-DD) or time (RFC 3339)", v)
}

func (h *handler) getAlertsSentV3(ctx context.Context, in *sentInput) (*rest.Output[*model.PagedAlertSettingsResponse], error) {
	after, err := parseDate("after", in.After)
	if err != nil {
		return nil, err
	}
	before, err := parseDate("before", in.Before)
	if err != nil {
		return nil, err
	}
	f := model.FindAlertRequest{
		CreatedBy: rest.Caller(ctx).Subject, After: after, Before: before, FacilityName: in.FacilityName,
		Incident: in.Incident, Subject: in.Subject, From: in.From, Hidden: &in.Hidden,
	}
	if f.CreatedBy == "" {
		f.CreatedBy = "\x00" // a token without a subject has sent nothing
	}
	for _, c := range in.AlertCompletion {
		f.Completion = append(f.Completion, model.AlertSentStatus(c))
	}
	if in.AlertType != "" {
		f.Types = []model.AlertType{model.AlertType(in.AlertType)}
	}
	if in.MessagePriority != "" {
		f.Priorities = []model.PriorityType{model.PriorityType(in.MessagePriority)}
	}
	res, err := h.list(ctx, f, in.PageParams, true)
	if err != nil {
		return nil, err
	}
	return rest.Answer(res), nil
}
