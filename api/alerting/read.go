package alerting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/catalog"
	"github.com/tocsin/tocsin/channels/etn"
	"github.com/tocsin/tocsin/channels/neighborhood"
	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
	"github.com/tocsin/tocsin/storage/results"
)

// loadAlert reads an alert of the caller's tenant, 404 when it has none.
func (h *handler) loadAlert(ctx context.Context, id int64) (*storage.Alert, *alert.Settings, error) {
	al, err := storage.GetAlert(ctx, h.d.DB, rest.Tenant(ctx), id)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, rest.NotFound("alert")
	}
	if err != nil {
		return nil, nil, rest.Unavailable("the database", err)
	}
	var s alert.Settings
	if err := json.Unmarshal(al.Settings, &s); err != nil {
		return nil, nil, err
	}
	return al, &s, nil
}

func attachmentsOf(raw json.RawMessage) []model.AlertAttachment {
	var refs []storage.AttachmentRef
	_ = json.Unmarshal(raw, &refs)
	out := []model.AlertAttachment{}
	for _, r := range refs {
		out = append(out, model.AlertAttachment{Name: r.Name, ContentType: r.ContentType, Size: r.Size})
	}
	return out
}

func channelsOf(list []string) []model.DeliveryChannel {
	out := make([]model.DeliveryChannel, len(list))
	for i, c := range list {
		out[i] = model.DeliveryChannel(c)
	}
	return out
}

// render renders each channel's message for a sample recipient as
// sampleMessage does (or with the variables left as they are when rec is
// nil), with the recipients counts has for the channel (none when counts is
// nil).
func render(s *alert.Settings, chans []string, rd *alert.Renderer, rec *storage.RecipientRow, counts *model.SearchSummary) []model.AlertChannelMessage {
	out := []model.AlertChannelMessage{}
	for i, ch := range chans {
		m := model.AlertChannelMessage{Channel: model.DeliveryChannel(ch)}
		if counts != nil {
			m.Recipients = &counts.PerChannel[i].Count
		}
		switch {
		case rd == nil:
			// Settings stored before a rule that their templates no
			// longer pass: the message as written.
			m.Subject, m.Body = s.Message.Subject, s.Message.Body
		case rec != nil:
			msg, _ := sampleMessage(rd, ch, rec)
			m.Subject, m.Body, m.HTML = msg.Subject, msg.Text, msg.HTML
		default:
			msg := rd.Unfilled(ch)
			m.Subject, m.Body, m.HTML = msg.Subject, msg.Text, msg.HTML
		}
		if c := channels.Channel(ch); c == channels.SocialPostA || c == channels.SocialPostB {
			// What the network posts: subject and text as one, the
			// link and hashtags after them.
			m.Body = social.OptionsFor(s, c).Post(social.NetworkOf(c), channels.Message{Subject: m.Subject, Text: m.Body})
			m.Subject, m.HTML = "", ""
		}
		m.Characters = len([]rune(m.Body))
		if ch == "text" {
			enc, _, seg := alertmsg.SMSInfo(m.Body)
			m.Encoding, m.Segments = enc, seg
		}
		out = append(out, m)
	}
	return out
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// descriptors are the descriptors of the channels chs, in order.
func descriptors(chs []string) []channels.Descriptor {
	out := make([]channels.Descriptor, len(chs))
	for i, ch := range chs {
		out[i] = catalog.For(channels.Channel(ch)).Descriptor
	}
	return out
}

// summaryOfCounts shows the counts of recipients on the channels chs.
func summaryOfCounts(c storage.RecipientCounts, chs []string) *model.SearchSummary {
	s := &model.SearchSummary{Total: c.Total, AdHoc: c.AdHoc, PerChannel: []model.ChannelRecipientCount{}}
	for i, ch := range chs {
		s.PerChannel = append(s.PerChannel, model.ChannelRecipientCount{Channel: model.DeliveryChannel(ch), Count: c.PerChannel[i]})
	}
	return s
}

// countEtnTargets puts into counts, for an alert with areas on the ETN
// channel, the numbers it calls (count) instead of its recipients with a
// voice phone: such an alert calls the numbers inside its areas.
func countEtnTargets(counts *storage.RecipientCounts, chs []string, s *alert.Settings, count func([]alert.Place, []string) (int64, error)) error {
	i := slices.Index(chs, string(channels.Etn))
	if i < 0 || len(etn.Areas(s)) == 0 {
		return nil
	}
	n, err := count(etn.Targets(s))
	if err != nil {
		return err
	}
	counts.PerChannel[i] = n
	return nil
}

// etnCountProblem answers err, the failure of counting an ETN alert's
// numbers: a count that ran past its bound (channelstate.ETNCountTimeout)
// is a 503 that says so, since a retry may find the database less busy;
// one that failed otherwise, an unavailable database.
func etnCountProblem(err error) error {
	var timedOut *channelstate.CountTimeoutError
	if errors.As(err, &timedOut) {
		return rest.Problem(http.StatusServiceUnavailable, fmt.Sprintf(
			"counting the numbers inside the alert's areas (etn) took longer than %s and was stopped: "+
				"the areas hold too many contacts and address points to count in time, or the database is busy; "+
				"try again later, or with smaller areas or fewer address-point lists", timedOut.After)).WithHeader("Retry-After", "5")
	}
	return rest.Unavailable("the database", err)
}

type previewInput struct {
	Body model.PreviewAlertRequest
}

func (h *handler) createAlertsPreview(ctx context.Context, in *previewInput) (*rest.Output[model.SingleAlertSettingsResponse], error) {
	tenant := rest.Tenant(ctx)
	p, err := h.prepare(ctx, tenant, in.Body.Settings, "body", "")
	if err != nil {
		return nil, err
	}
	counts, err := storage.CountRecipients(ctx, h.d.DB, tenant, p.spec, descriptors(p.channels))
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if err := countEtnTargets(&counts, p.channels, &p.settings, func(areas []alert.Place, lists []string) (int64, error) {
		return (&channelstate.AlertETNTargets{DB: h.d.DB}).Count(ctx, tenant, areas, lists)
	}); err != nil {
		return nil, etnCountProblem(err)
	}
	sample, err := storage.SampleRecipient(ctx, h.d.DB, tenant, p.spec, in.Body.SampleRecipientID)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if sample == nil && in.Body.SampleRecipientID > 0 {
		return nil, rest.Invalid("body", "sampleRecipientId", "the contact is not among the alert's recipients", in.Body.SampleRecipientID)
	}
	shown, err := settingsModel(&p.settings)
	if err != nil {
		return nil, err
	}
	summary := summaryOfCounts(counts, p.channels)
	res := model.SingleAlertSettingsResponse{
		Settings: shown, Attachments: []model.AlertAttachment{},
		Recipients:   summary,
		Messages:     render(&p.settings, p.channels, p.renderer, sampleOrEmpty(sample), summary),
		ScheduledFor: p.sendAt,
	}
	for _, a := range p.attachments {
		res.Attachments = append(res.Attachments, model.AlertAttachment{Name: a.Name, ContentType: a.ContentType, Size: a.Size})
	}
	if sample != nil && sample.PersonID != nil {
		res.SampleRecipientID = *sample.PersonID
	}
	return rest.Answer(res), nil
}

func sampleOrEmpty(r *storage.RecipientRow) *storage.RecipientRow {
	if r == nil {
		return &storage.RecipientRow{}
	}
	return r
}

type getAlertInput struct {
	ID                      int64 `path:"id" doc:"The alert id."`
	ReplaceMessageVariables bool  `query:"replaceMessageVariables" default:"true" doc:"Fill the messages' variables with the values of the alert's first recipient. With false, each channel's message is shown as its block makes it, its variables as written ({{firstName}}, the response link as {{responseLink}})."`
}

func (h *handler) getAlertsByID(ctx context.Context, in *getAlertInput) (*rest.Output[model.SingleAlertSettingsResponse], error) {
	al, s, err := h.loadAlert(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	shown, err := settingsModel(s)
	if err != nil {
		return nil, err
	}
	tenant := rest.Tenant(ctx)
	res := model.SingleAlertSettingsResponse{
		ID: al.ID, Status: model.AlertStatus(al.Status), SentStatus: model.SentStatusOf(model.AlertStatus(al.Status)),
		CreatedBy: al.CreatedBy, CreatedAt: &al.CreatedAt, ScheduledFor: al.ScheduledFor, Settings: shown,
		Attachments: attachmentsOf(al.Attachments),
	}
	if al.ResolvedAt != nil {
		counts, err := h.results.RecipientCounts(ctx, tenant, al.ID, descriptors(al.Channels))
		if err != nil {
			return nil, rest.Unavailable("the database", err)
		}
		if err := countEtnTargets(&counts, al.Channels, s, func(areas []alert.Place, lists []string) (int64, error) {
			// The numbers stored by the first batch, or, while the alert is
			// being delivered and has stored none yet, the numbers inside
			// the areas now. An alert that ended stored all it called.
			c, err := storage.EtnTargetTotals(ctx, h.d.DB, tenant, al.ID)
			if err != nil || c.Total > 0 || (al.Status != storage.AlertQueued && al.Status != storage.AlertProcessing) {
				return c.Total, err
			}
			return (&channelstate.AlertETNTargets{DB: h.d.DB}).Count(ctx, tenant, areas, lists)
		}); err == nil {
			res.Recipients = summaryOfCounts(counts, al.Channels)
		} else if !errors.As(err, new(*channelstate.CountTimeoutError)) {
			return nil, etnCountProblem(err)
		}
		// A count past its bound leaves the summary out of this read, as
		// while the recipients are not resolved: the alert is still there
		// to read, and its first batch stores the numbers it calls.
	}
	var rec *storage.RecipientRow
	rd, rerr := alert.NewRenderer(tenant, al.ID, s, h.d.Config.PublicURL, nil)
	if in.ReplaceMessageVariables && rerr == nil {
		// The first recipient's values, or, before the recipients are
		// resolved, none (as the submission check counts them).
		rec = &storage.RecipientRow{}
		if first, err := h.results.FirstRecipient(ctx, tenant, al.ID); err == nil {
			r := first.RecipientRow
			rec = &r
			if r.PersonID != nil {
				res.SampleRecipientID = *r.PersonID
			}
		}
	}
	if rerr != nil {
		rd, rec = nil, nil
	}
	res.Messages = render(s, al.Channels, rd, rec, res.Recipients)
	return rest.Answer(res), nil
}

type idInput struct {
	ID int64 `path:"id" doc:"The alert id."`
}

// summaryModel shows delivery totals.
func summaryModel(t alert.Totals) model.DeliverySummary {
	return model.DeliverySummary{Total: t.Total, Pending: t.Pending, Retrying: t.Retrying, Sent: t.Sent, Delivered: t.Delivered,
		Failed: t.Failed, Skipped: t.Skipped, Final: t.Final()}
}

// channelTotals are the delivery totals of every channel of the alert, in
// the alert's channel order (storage.AlertTotals).
func (h *handler) channelTotals(ctx context.Context, al *storage.Alert) ([]alert.Totals, error) {
	t, err := storage.AlertTotals(ctx, h.d.DB, al)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	return t, nil
}

// summarized is an alert with the delivery summaries of its channels.
type summarized struct {
	al       *storage.Alert
	settings *alert.Settings
	// channels are the summaries of every channel, total their sum.
	channels []model.AggregatedChannelResult
	total    model.DeliverySummary
}

// loadSummarized reads an alert of the caller's tenant (see loadAlert) with
// the delivery summaries of its channels.
func (h *handler) loadSummarized(ctx context.Context, id int64) (*summarized, error) {
	al, s, err := h.loadAlert(ctx, id)
	if err != nil {
		return nil, err
	}
	ts, err := h.channelTotals(ctx, al)
	if err != nil {
		return nil, err
	}
	out := &summarized{al: al, settings: s, channels: []model.AggregatedChannelResult{}, total: summaryModel(alert.Sum(ts...))}
	for i, ch := range al.Channels {
		out.channels = append(out.channels, model.AggregatedChannelResult{Channel: model.DeliveryChannel(ch), DeliverySummary: summaryModel(ts[i])})
	}
	return out, nil
}

func (h *handler) getAlertsByIDStatus(ctx context.Context, in *idInput) (*rest.Output[model.SingleAlertStatusResponse], error) {
	sum, err := h.loadSummarized(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	al := sum.al
	hist, err := h.results.StatusHistory(ctx, al.TenantID, al.ID)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	res := model.SingleAlertStatusResponse{
		AlertID: al.ID, Status: model.AlertStatus(al.Status), SentStatus: model.SentStatusOf(model.AlertStatus(al.Status)),
		Completed: al.CompletedAt != nil, Cycle: al.CurrentCycle, Recipients: al.RecipientCount, Deliveries: sum.total, Channels: sum.channels,
		Error: al.Error, History: []model.AlertStatusChange{}, ScheduledFor: al.ScheduledFor, QueuedAt: al.QueuedAt,
		ProcessingAt: al.ProcessingAt, SentAt: al.SentAt, FailedAt: al.FailedAt, CompletedAt: al.CompletedAt,
	}
	for _, c := range hist {
		res.History = append(res.History, model.AlertStatusChange{Status: model.AlertStatus(c.Status), At: c.At, Detail: c.Detail})
	}
	return rest.Answer(res), nil
}

func (h *handler) getAlertsByIDResults(ctx context.Context, in *idInput) (*rest.Output[model.SingleDeliverySummaryResponse], error) {
	sum, err := h.loadSummarized(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	al, s := sum.al, sum.settings
	res := model.SingleDeliverySummaryResponse{AlertID: al.ID, Status: model.AlertStatus(al.Status), Recipients: al.RecipientCount,
		Summary: sum.total, Channels: sum.channels}
	if res.Confirmed, res.Responded, err = h.results.ResponseCounts(ctx, al.TenantID, al.ID); err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if s.Type == alert.TypePoll && s.Survey != nil {
		poll, err := h.pollResults(ctx, al, s.Survey, res.Responded)
		if err != nil {
			return nil, err
		}
		res.Poll = poll
	}
	return rest.Answer(res), nil
}

var severityRank = map[string]int{"None": 0, "Low": 1, "Medium": 2, "High": 3, "Critical": 4}

func (h *handler) pollResults(ctx context.Context, al *storage.Alert, sv *alert.SurveySettings, responded int64) (*model.PollResults, error) {
	rows, err := h.results.OptionCounts(ctx, al.TenantID, al.ID)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	counts := map[[2]int]int64{}
	for _, r := range rows {
		counts[[2]int{r.Question, r.Option}] = r.Count
	}
	pr := &model.PollResults{Questions: []model.PollQuestionResults{}}
	sevCounts := map[string]int64{}
	hasSeverity := false
	for _, q := range sv.Questions {
		qr := model.PollQuestionResults{QuestionID: q.ID, Text: q.Text, Results: model.PollOptionResults{Options: []model.PollOptionResult{}}}
		for _, o := range q.Options {
			qr.Responded += counts[[2]int{q.ID, o.ID}]
		}
		for _, o := range q.Options {
			n := counts[[2]int{q.ID, o.ID}]
			pct := 0.0
			if qr.Responded > 0 {
				pct = float64(n) * 100 / float64(qr.Responded)
			}
			qr.Results.Options = append(qr.Results.Options, model.PollOptionResult{OptionID: o.ID, Text: o.Text, Count: n, Percent: pct})
			if o.Severity != "" {
				hasSeverity = true
				sevCounts[o.Severity] += n
			}
		}
		qr.NotResponded = max(al.RecipientCount-qr.Responded, 0)
		pr.Questions = append(pr.Questions, qr)
	}
	pr.Summary = model.SurveySummary{Recipients: al.RecipientCount, Responded: responded}
	if al.RecipientCount > 0 {
		pr.Summary.ResponseRate = float64(responded) * 100 / float64(al.RecipientCount)
	}
	if hasSeverity {
		sa := &model.SeverityAssessment{Highest: "None", Responses: []model.SeverityAssessment_responses_inner{}}
		for _, sev := range []string{"None", "Low", "Medium", "High", "Critical"} {
			sa.Responses = append(sa.Responses, model.SeverityAssessment_responses_inner{Severity: sev, Count: sevCounts[sev]})
			if sevCounts[sev] > 0 && severityRank[sev] > severityRank[sa.Highest] {
				sa.Highest = sev
			}
		}
		pr.Severity = sa
	}
	return pr, nil
}

func recipientModel(r results.Recipient) model.Recipient {
	phone := r.Phone
	if phone == nil {
		phone = r.VoicePhone
	}
	resp := r.RespondedAt
	if resp == nil {
		resp = r.ConfirmedAt
	}
	return model.Recipient{
		RecipientID: r.Seq, ContactID: r.PersonID, ExternalID: r.ExternalID,
		Name: model.PersonName{First: r.FirstName, Last: r.LastName}, Email: deref(r.Email), Phone: deref(phone),
		IsMandatory: r.IsMandatory, Status: model.DeliveryPending, Confirmed: r.ConfirmedAt != nil, ConfirmedAt: r.ConfirmedAt,
		ResponseTime: resp, Responses: []model.RecipientResponse{},
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var statusRank = map[string]int{"Delivered": 6, "Sent": 5, "Retrying": 4, "Pending": 3, "Skipped": 2, "Failed": 1}

type recipientsInput struct {
	ID int64 `path:"id" doc:"The alert id."`
	rest.PageParams
	RecipientIDs []int64 `query:"recipientIds" maxItems:"500" doc:"Only these recipients (their numbers within the alert), comma-separated."`
	IsMandatory  string  `query:"isMandatory" enum:"true,false" doc:"Only recipients selected directly (true) or only through groups, lists and areas (false)."`
	PollOptionID int     `query:"pollOptionId" minimum:"0" maximum:"100000" doc:"Only recipients who chose this poll option (option ids are 1 to 100000, as PollOptionModel's; 0 filters nothing)."`
	Name         string  `query:"name" maxLength:"200" doc:"Name contains this, case-insensitive."`
	Email        string  `query:"email" maxLength:"254" doc:"Email address contains this, case-insensitive."`
}

func (h *handler) getAlertsByIDRecipients(ctx context.Context, in *recipientsInput) (*rest.Output[model.PagedRecipientResponse], error) {
	al, s, err := h.loadAlert(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	order, err := rest.SortBy(in.Sort, results.RecipientSorting)
	if err != nil {
		return nil, err
	}
	f := results.RecipientFilter{Tenant: al.TenantID, AlertID: al.ID, Seqs: in.RecipientIDs, PollOptionID: in.PollOptionID, Name: in.Name, Email: in.Email}
	if in.IsMandatory != "" {
		m := in.IsMandatory == "true"
		f.Mandatory = &m
	}
	rows, total, err := h.results.Recipients(ctx, f, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	items, err := h.recipientModels(ctx, al, s, rows)
	if err != nil {
		return nil, err
	}
	return rest.Answer(model.PagedRecipientResponse{Paging: rest.NewPaging(in.PageParams, total), Items: items}), nil
}

// recipientModels adds each recipient's best delivery status and poll answers.
func (h *handler) recipientModels(ctx context.Context, al *storage.Alert, s *alert.Settings, rows []results.Recipient) ([]model.Recipient, error) {
	items := make([]model.Recipient, len(rows))
	if len(rows) == 0 {
		return items, nil
	}
	seqs := make([]int64, len(rows))
	idx := map[int64]int{}
	for i, r := range rows {
		items[i] = recipientModel(r)
		seqs[i] = r.Seq
		idx[r.Seq] = i
	}
	ds, err := h.results.LatestStatuses(ctx, al.TenantID, al.ID, seqs)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	for _, d := range ds {
		it := &items[idx[d.Seq]]
		if it.Status == model.DeliveryPending && d.Status != "" || statusRank[d.Status] > statusRank[string(it.Status)] {
			it.Status = model.DeliveryStatus(d.Status)
		}
	}
	rs, err := h.results.Answers(ctx, al.TenantID, al.ID, seqs)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	texts := optionTexts(s)
	for _, r := range rs {
		it := &items[idx[r.Seq]]
		it.Responses = append(it.Responses, model.RecipientResponse{QuestionID: r.Question, OptionID: r.Option, OptionText: texts[r.Option], RespondedAt: r.At, Via: r.Via})
	}
	return items, nil
}

func optionTexts(s *alert.Settings) map[int]string {
	out := map[int]string{}
	if s.Survey != nil {
		for _, q := range s.Survey.Questions {
			for _, o := range q.Options {
				out[o.ID] = o.Text
			}
		}
	}
	return out
}

type singleRecipientInput struct {
	AlertID     int64 `path:"alertId" doc:"The alert id."`
	RecipientID int64 `path:"recipientId" doc:"The recipient's number within the alert."`
}

func (h *handler) getAlertsByIDSingleRecipient(ctx context.Context, in *singleRecipientInput) (*rest.Output[model.SingleRecipientResponse], error) {
	al, s, err := h.loadAlert(ctx, in.AlertID)
	if err != nil {
		return nil, err
	}
	row, err := h.results.Recipient(ctx, al.TenantID, al.ID, in.RecipientID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, rest.NotFound("recipient")
	}
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	items, err := h.recipientModels(ctx, al, s, []results.Recipient{row})
	if err != nil {
		return nil, err
	}
	ds, err := h.results.RecipientDeliveries(ctx, al.TenantID, al.ID, in.RecipientID)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	byChannel := map[string]*model.ChannelDeliveries{}
	out := model.SingleRecipientResponse{AlertID: al.ID, Recipient: items[0], Channels: []model.ChannelDeliveries{}}
	rec := storage.RecipientRow{Email: row.Email, Phone: row.Phone, VoicePhone: row.VoicePhone}
	for _, ch := range al.Channels {
		byChannel[ch] = &model.ChannelDeliveries{Channel: model.DeliveryChannel(ch), Address: alert.AddressOf(ch, &rec),
			Status: model.DeliveryPending, Deliveries: []model.ChannelDelivery{}}
	}
	for _, d := range ds {
		cd, ok := byChannel[d.Channel]
		if !ok {
			continue
		}
		cd.Deliveries = append(cd.Deliveries, deliveryModel(d, alert.DeliveryKey(al.TenantID, al.ID, tagOf(al), d.Channel, d.Cycle, d.Seq)))
		cd.Status = model.DeliveryStatus(d.Status)
	}
	if err := h.sharedDeliveries(ctx, al, s, row, byChannel); err != nil {
		return nil, err
	}
	for _, ch := range al.Channels {
		out.Channels = append(out.Channels, *byChannel[ch])
	}
	return rest.Answer(out), nil
}

// tagOf is the tag of al, in its delivery keys ("" for alerts stored
// before tags came).
func tagOf(al *storage.Alert) string { return alert.TagOf(al.TenantID, al.ID, al.WorkflowID) }

// deliveryModel shows one delivery, whose idempotency key is key.
func deliveryModel(d results.Delivery, key string) model.ChannelDelivery {
	return model.ChannelDelivery{
		Channel: model.DeliveryChannel(d.Channel), Cycle: d.Cycle, Address: d.Address, Status: model.DeliveryStatus(d.Status),
		Attempts: d.Attempts, ProviderMessageID: d.ProviderMessageID, Error: d.Error, Permanent: d.Permanent,
		IdempotencyKey: key, SentAt: d.SentAt, DeliveredAt: d.DeliveredAt, UpdatedAt: d.UpdatedAt,
	}
}

// sharedDeliveries fills in the channels that reach a recipient through
// deliveries shared by the whole alert: the broadcast-style channels (one
// delivery per destination, in alert_broadcasts) and ETN with areas (the
// recipient's numbers among the called targets). Their status is the best
// of those deliveries; once the alert is final, a channel with none is
// Skipped rather than Pending.
func (h *handler) sharedDeliveries(ctx context.Context, al *storage.Alert, s *alert.Settings, row results.Recipient, byChannel map[string]*model.ChannelDeliveries) error {
	final := al.Status == storage.AlertSent || al.Status == storage.AlertFailed
	var bcast []string
	etnArea := false
	for ch := range byChannel {
		switch {
		case alert.IsBroadcast(ch):
			bcast = append(bcast, ch)
		case ch == "etn" && len(s.Recipients.Areas) > 0:
			etnArea = true
		}
	}
	if len(bcast) == 0 && !etnArea {
		return nil
	}
	rows, err := h.results.SharedDeliveries(ctx, al.TenantID, al.ID, alert.WorkflowID(al.TenantID, al.ID, tagOf(al)), bcast, etnArea, row.PersonID)
	if err != nil {
		return rest.Unavailable("the database", err)
	}
	seen := map[string]bool{}
	for _, d := range rows {
		cd := byChannel[d.Channel]
		if cd == nil {
			continue
		}
		cd.Deliveries = append(cd.Deliveries, deliveryModel(d, d.Key))
		if !seen[d.Channel] || statusRank[d.Status] > statusRank[string(cd.Status)] {
			cd.Status = model.DeliveryStatus(d.Status)
		}
		seen[d.Channel] = true
	}
	if !final {
		return nil
	}
	if etnArea {
		bcast = append(bcast, "etn")
	}
	for _, ch := range bcast {
		if cd := byChannel[ch]; cd != nil && !seen[ch] {
			cd.Status = model.DeliverySkipped
		}
	}
	return nil
}

type alertIDInput struct {
	AlertID int64 `path:"alertId" doc:"The alert id."`
}

func (h *handler) getAggregatedChannelSummary(ctx context.Context, in *alertIDInput) (*rest.Output[model.AggregatedChannelSummaryResponse], error) {
	al, _, err := h.loadAlert(ctx, in.AlertID)
	if err != nil {
		return nil, err
	}
	ts, err := h.channelTotals(ctx, al)
	if err != nil {
		return nil, err
	}
	res := model.AggregatedChannelSummaryResponse{AlertID: al.ID}
	res.Results.Email.Channel, res.Results.Voice.Channel, res.Results.Sms.Channel = "email", "voice", "text"
	var shown []alert.Totals
	for i, ch := range al.Channels {
		c := model.AggregatedChannelResult{Channel: model.DeliveryChannel(ch), DeliverySummary: summaryModel(ts[i])}
		switch ch {
		case "email":
			res.Results.Email = c
		case "voice":
			res.Results.Voice = c
		case "text":
			res.Results.Sms = c
		default:
			continue
		}
		shown = append(shown, ts[i])
	}
	res.Total = summaryModel(alert.Sum(shown...))
	return rest.Answer(res), nil
}

type channelPageInput struct {
	AlertID  int64 `path:"alertId" doc:"The alert id."`
	Page     int   `query:"page" minimum:"1" maximum:"1000000" default:"1" doc:"Page number, starting at 1."`
	PageSize int   `query:"pageSize" minimum:"1" maximum:"500" default:"25" doc:"Items per page, at most 500."`
}

// resultsPage is the shape every per-channel results page of the model
// shares (EmailResultsSummaryResponse, SmsResultsSummaryResponse, …): a page
// of items of type T with the channel's totals.
type resultsPage[T any] interface {
	~struct {
		rest.Paging
		Totals model.AggregatedChannelResult `json:"totals"`
		Items  []T                           `json:"items"`
	}
}

// channelPageOutput is the output of a per-channel results page.
type channelPageOutput[P any] struct {
	Body P
}

// channelResults reads a page of one channel's deliveries, by recipient and
// cycle, and makes each delivery an item of the page P with item.
func channelResults[P resultsPage[T], T any](ctx context.Context, h *handler, in *channelPageInput, channel string,
	item func(model.ChannelResultFields, results.Delivery, results.Recipient) T) (*channelPageOutput[P], error) {
	pp := rest.PageParams{Page: in.Page, PageSize: in.PageSize}
	totals := model.AggregatedChannelResult{Channel: model.DeliveryChannel(channel)}
	sum, err := h.loadSummarized(ctx, in.AlertID)
	if err != nil {
		return nil, err
	}
	al := sum.al
	for _, c := range sum.channels {
		if string(c.Channel) == channel {
			totals = c
		}
	}
	ds, total, err := h.results.ChannelDeliveries(ctx, al.TenantID, al.ID, channel, pp.Limit(), pp.Offset())
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	recs := map[int64]results.Recipient{}
	if len(ds) > 0 {
		seqs := make([]int64, len(ds))
		for i, d := range ds {
			seqs[i] = d.Seq
		}
		rows, err := h.results.RecipientsBySeq(ctx, al.TenantID, al.ID, seqs)
		if err != nil {
			return nil, rest.Unavailable("the database", err)
		}
		for _, r := range rows {
			recs[r.Seq] = r
		}
	}
	items := make([]T, 0, len(ds))
	for _, d := range ds {
		r := recs[d.Seq]
		items = append(items, item(resultFields(d, r), d, r))
	}
	return &channelPageOutput[P]{Body: P{Paging: rest.NewPaging(pp, total), Totals: totals, Items: items}}, nil
}

func resultFields(d results.Delivery, r results.Recipient) model.ChannelResultFields {
	var e model.ChannelResultFields
	e.RecipientID, e.ContactID = d.Seq, r.PersonID
	e.Name = model.PersonName{First: r.FirstName, Last: r.LastName}
	e.Cycle, e.Status, e.Attempts = d.Cycle, model.DeliveryStatus(d.Status), d.Attempts
	e.ProviderMessageID, e.Error, e.SentAt, e.DeliveredAt, e.UpdatedAt = d.ProviderMessageID, d.Error, d.SentAt, d.DeliveredAt, d.UpdatedAt
	return e
}

func (h *handler) getAlertChannelResultsEmail(ctx context.Context, in *channelPageInput) (*channelPageOutput[model.EmailResultsSummaryResponse], error) {
	return channelResults[model.EmailResultsSummaryResponse](ctx, h, in, "email",
		func(f model.ChannelResultFields, d results.Delivery, _ results.Recipient) model.EmailResultSummary {
			return model.EmailResultSummary{ChannelResultFields: f, Email: d.Address}
		})
}

func (h *handler) getAlertChannelResultsText(ctx context.Context, in *channelPageInput) (*channelPageOutput[model.SmsResultsSummaryResponse], error) {
	return channelResults[model.SmsResultsSummaryResponse](ctx, h, in, "text",
		func(f model.ChannelResultFields, d results.Delivery, _ results.Recipient) model.SmsResultSummary {
			return model.SmsResultSummary{ChannelResultFields: f, Phone: d.Address}
		})
}

func (h *handler) getAlertChannelResultsVoice(ctx context.Context, in *channelPageInput) (*channelPageOutput[model.VoiceResultsSummaryResponse], error) {
	return channelResults[model.VoiceResultsSummaryResponse](ctx, h, in, "voice",
		func(f model.ChannelResultFields, d results.Delivery, r results.Recipient) model.VoiceResultSummary {
			return model.VoiceResultSummary{ChannelResultFields: f, Phone: d.Address, Confirmed: r.ConfirmedAt != nil}
		})
}

func (h *handler) getAlertChannelResultsEtn(ctx context.Context, in *channelPageInput) (*channelPageOutput[model.EtnResultsSummaryResponse], error) {
	if out, err := h.etnTargetsPage(ctx, in); out != nil || err != nil {
		return out, err
	}
	return channelResults[model.EtnResultsSummaryResponse](ctx, h, in, "etn",
		func(f model.ChannelResultFields, d results.Delivery, _ results.Recipient) model.EtnResultSummary {
			return model.EtnResultSummary{ChannelResultFields: f, Phone: d.Address}
		})
}

type neighborhoodInput struct {
	AlertID int64 `path:"alertId" doc:"The alert id."`
	rest.PageParams
}

// getNeighborhoodChannelStatus lists the neighborhood posts of an alert:
// one row per account and group, as the neighborhood sender recorded them.
// Sortable by AccountName (default), GroupName, Status and UpdatedAt.
func (h *handler) getNeighborhoodChannelStatus(ctx context.Context, in *neighborhoodInput) (*rest.Output[model.PagedNeighborhoodChannelStatusResponse], error) {
	al, _, err := h.loadAlert(ctx, in.AlertID)
	if err != nil {
		return nil, err
	}
	order, err := rest.OrderBy(in.Sort, neighborhood.SortColumns, "lower(account_name)", "lower(group_name), group_id, message_key")
	if err != nil {
		return nil, err
	}
	sts, total, err := (&neighborhood.Statuses{DB: h.d.DB}).ForAlert(ctx, al.TenantID, al.ID, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	out := model.PagedNeighborhoodChannelStatusResponse{Paging: rest.NewPaging(in.PageParams, storage.ExactTotal(int64(total))), Items: []model.NeighborhoodChannelStatus{}}
	for _, x := range sts {
		st := model.NeighborhoodChannelStatus{Account: model.NeighborhoodAccount{ID: x.AccountID, Name: x.AccountName},
			Status: model.DeliveryStatus(storage.DeliveryFailed), ProviderMessageID: x.PostID, Error: x.Error, UpdatedAt: x.UpdatedAt}
		if x.Status == neighborhood.StatusPosted {
			st.Status = model.DeliveryStatus(storage.DeliveryDelivered)
			t := x.UpdatedAt
			st.SentAt = &t
		}
		if x.GroupID != "" {
			st.Group = &model.NeighborhoodGroup{ID: x.GroupID, Name: x.GroupName}
		}
		out.Items = append(out.Items, st)
	}
	return rest.Answer(out), nil
}

// etnTargetsPage is the ETN page of an alert that called the numbers inside
// its areas: one item per number called (recipientId is the target's
// number within the alert). It returns nil for an alert without targets.
func (h *handler) etnTargetsPage(ctx context.Context, in *channelPageInput) (*channelPageOutput[model.EtnResultsSummaryResponse], error) {
	al, _, err := h.loadAlert(ctx, in.AlertID)
	if err != nil {
		return nil, err
	}
	pp := rest.PageParams{Page: in.Page, PageSize: in.PageSize}
	sum, err := storage.EtnTargetTotals(ctx, h.d.DB, al.TenantID, al.ID)
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	if sum.Total == 0 {
		return nil, nil
	}
	rows, err := h.results.EtnTargets(ctx, al.TenantID, al.ID, pp.Limit(), pp.Offset())
	if err != nil {
		return nil, rest.Unavailable("the database", err)
	}
	totals := model.AggregatedChannelResult{Channel: model.DeliveryChannel("etn"), DeliverySummary: summaryModel(sum)}
	out := model.EtnResultsSummaryResponse{Paging: rest.NewPaging(pp, storage.ExactTotal(sum.Total)), Totals: totals, Items: []model.EtnResultSummary{}}
	for _, r := range rows {
		item := model.EtnResultSummary{Phone: r.Phone}
		item.RecipientID, item.ContactID, item.Name, item.Cycle, item.Status = r.Seq, r.PersonID, model.PersonName{First: r.First, Last: r.Last}, 1, model.DeliveryStatus(r.Status)
		item.Attempts, item.ProviderMessageID, item.Error, item.SentAt, item.DeliveredAt, item.UpdatedAt = r.Attempts, r.ProviderMessageID, r.Error, r.SentAt, r.DeliveredAt, r.UpdatedAt
		out.Items = append(out.Items, item)
	}
	return &channelPageOutput[model.EtnResultsSummaryResponse]{Body: out}, nil
}
