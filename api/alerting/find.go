package alerting

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
)

var alertSorts = map[string]string{
	"id": "id", "createdat": "created_at", "sentat": "sent_at", "subject": "lower(subject)", "status": "status",
	"priority": "priority", "type": "alert_type", "from": "lower(sender_name)",
}

// list answers a page of the tenant's alerts matching f. Restricted alerts
// of other users are left out.
func (h *handler) list(ctx context.Context, f model.FindAlertRequest, pp rest.PageParams, dateColumn string) (*model.PagedAlertSettingsResponse, error) {
	order, err := rest.OrderBy(pp.Sort, alertSorts, "created_at DESC", "id DESC")
	if err != nil {
		return nil, err
	}
	caller := rest.Caller(ctx)
	where := []string{"tenant_id = $1", "(NOT restricted OR created_by = $2)"}
	args := []any{caller.Tenant, caller.Subject}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if len(f.IDs) > 0 {
		add("id = ANY(?)", pq.Int64Array(f.IDs))
	}
	if len(f.Statuses) > 0 {
		add("status = ANY(?)", strs(f.Statuses))
	}
	if len(f.Completion) > 0 {
		var st []string
		for _, c := range f.Completion {
			switch c {
			case model.SentStatusSent:
				st = append(st, storage.AlertSent)
			case model.SentStatusFailed:
				st = append(st, storage.AlertFailed)
			case model.SentStatusProcessing:
				st = append(st, storage.AlertScheduled, storage.AlertQueued, storage.AlertProcessing)
			}
		}
		add("status = ANY(?)", pq.StringArray(st))
	}
	if len(f.Types) > 0 {
		add("alert_type = ANY(?)", strs(f.Types))
	}
	if len(f.Priorities) > 0 {
		add("priority = ANY(?)", strs(f.Priorities))
	}
	if f.Subject != "" {
		add(`subject ILIKE ?`, "%"+likeEscape(f.Subject)+"%")
	}
	if f.From != "" {
		add(`sender_name ILIKE ?`, "%"+likeEscape(f.From)+"%")
	}
	if f.Incident != "" {
		add(`incident_name ILIKE ?`, "%"+likeEscape(f.Incident)+"%")
	}
	if f.FacilityName != "" {
		add(`EXISTS (SELECT 1 FROM unnest(facility_names) fn WHERE lower(fn) = lower(?))`, f.FacilityName)
	}
	if f.CreatedBy != "" {
		add("created_by = ?", f.CreatedBy)
	}
	hidden := f.Hidden != nil && *f.Hidden
	add("hidden = ?", hidden)
	if f.After != nil {
		add(dateColumn+" >= ?", *f.After)
	}
	if f.Before != nil {
		add(dateColumn+" < ?", *f.Before)
	}
	cond := strings.Join(where, " AND ")
	var total int64
	if err := h.d.DB.GetContext(ctx, &total, `SELECT count(*) FROM alerts WHERE `+cond, args...); err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	var rows []storage.Alert
	args = append(args, pp.Limit(), pp.Offset())
	if err := h.d.DB.SelectContext(ctx, &rows, `SELECT `+storage.AlertColumns+` FROM alerts WHERE `+cond+` ORDER BY `+order+
		` LIMIT $`+strconv.Itoa(len(args)-1)+` OFFSET $`+strconv.Itoa(len(args)), args...); err != nil {
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

func strs[T ~string](v []T) pq.StringArray {
	out := make(pq.StringArray, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}

type findInput struct {
	rest.PageParams
	Body *model.FindAlertRequest `required:"false"`
}

type pagedAlertsOutput struct {
	Body *model.PagedAlertSettingsResponse
}

func (h *handler) findAlerts(ctx context.Context, in *findInput) (*pagedAlertsOutput, error) {
	f := model.FindAlertRequest{}
	if in.Body != nil {
		f = *in.Body
	}
	res, err := h.list(ctx, f, in.PageParams, "created_at")
	if err != nil {
		return nil, err
	}
	return &pagedAlertsOutput{Body: res}, nil
}

type sentInput struct {
	rest.PageParams
	After           string   `query:"after" maxLength:"40" doc:"Sent at or after this date (YYYY-MM-DD, UTC) or time (RFC 3339). An alert not sent yet counts with its creation time." example:"2024-11-01"`
	Before          string   `query:"before" maxLength:"40" doc:"Sent before this date (YYYY-MM-DD: before that day starts, UTC) or time (RFC 3339)." example:"2024-12-01"`
	AlertCompletion []string `query:"alertCompletion" enum:"Sent,Processing,Failed" maxItems:"3" doc:"Completion states, comma-separated."`
	AlertType       string   `query:"alertType" enum:"Default,Poll,Conference"`
	FacilityName    string   `query:"facilityName" maxLength:"200" doc:"A facility of the alert has this name (case-insensitive)."`
	Hidden          bool     `query:"hidden" doc:"true: only hidden alerts; false (default): only visible ones."`
	Incident        string   `query:"incident" maxLength:"200" doc:"Incident name contains this (case-insensitive)."`
	MessagePriority string   `query:"messagepriority" enum:"Emergency,NonEmergency"`
	Subject         string   `query:"subject" maxLength:"200" doc:"Subject contains this (case-insensitive)."`
	From            string   `query:"from" maxLength:"100" doc:"Sender name contains this (case-insensitive)."`
}

func parseDate(field, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return &t, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return &t, nil
	}
	return nil, rest.Invalid("query", field, "not a date (YYYY-MM-DD) or time (RFC 3339)", v)
}

func (h *handler) getAlertsSentV3(ctx context.Context, in *sentInput) (*pagedAlertsOutput, error) {
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
	res, err := h.list(ctx, f, in.PageParams, "coalesce(sent_at, created_at)")
	if err != nil {
		return nil, err
	}
	return &pagedAlertsOutput{Body: res}, nil
}
