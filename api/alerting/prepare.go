package alerting

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/files/fileservice"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/cap"
	"github.com/tocsin/tocsin/channels/catalog"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/internal/emailaddr"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/names"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// Limits of an alert beyond the ones its schema states.
const (
	// MaxAttachmentBytes bounds the attachments of one alert together.
	MaxAttachmentBytes = 10 << 20
)

// latestSendAt is the latest time an alert made at now may be scheduled
// for: a calendar year ahead, the same date and time next year in UTC (29
// February's is 1 March).
func latestSendAt(now time.Time) time.Time { return now.UTC().AddDate(1, 0, 0) }

// prepared is a validated alert, with the tenant's defaults applied.
type prepared struct {
	settings    alert.Settings
	channels    []string
	spec        storage.RecipientSpec
	renderer    *alert.Renderer
	sendAt      *time.Time
	attachments []storage.AttachmentRef
}

// failures collects validation failures at one location prefix.
type failures struct {
	loc, prefix string
	list        []rest.ValidationFailure
}

// newFailures collects the failures of the settings of an alert at prefix
// ("", "alerts[2]") in the request part loc.
func newFailures(loc, prefix string) *failures {
	if prefix == "" {
		return &failures{loc: loc, prefix: "settings"}
	}
	return &failures{loc: loc, prefix: prefix + ".settings"}
}

func (f *failures) add(field, msg string, value any) {
	if f.prefix != "" {
		if field == "" {
			field = f.prefix
		} else {
			field = f.prefix + "." + field
		}
	}
	f.list = append(f.list, rest.Failure(f.loc, field, msg, value))
}

func (f *failures) err() error {
	if len(f.list) == 0 {
		return nil
	}
	return rest.Problem(http.StatusBadRequest, "validation failed", f.list...)
}

// prepare validates an alert's settings completely (the checks the schema
// cannot make: references to the tenant's contacts, groups, lists and
// files, areas, templates, message sizes, schedule) and applies the
// tenant's defaults. loc is the location of the request part ("body") and
// prefix the path of the settings' parent inside it ("", "alerts[2]").
func (h *handler) prepare(ctx context.Context, tenant string, in model.AlertSettings, loc, prefix string) (*prepared, error) {
	f := newFailures(loc, prefix)
	defs, _, err := h.defaults(ctx, tenant)
	if err != nil {
		return nil, err
	}
	withDefaults, err := applyDefaults(in, defs)
	if err != nil {
		return nil, err
	}
	s, err := settingsOf(withDefaults)
	if err != nil {
		return nil, err
	}
	normalFileNames(&s)
	holdNames(&s, f)
	p := &prepared{channels: s.Channels.Enabled()}

	if len(p.channels) == 0 {
		f.add("channels", "no channel is enabled: enable at least one channel block (for example email or text)", nil)
	}
	r := s.Recipients
	if len(r.ContactIDs) == 0 && len(r.Groups) == 0 && len(r.DistributionListIDs) == 0 && r.Directory == nil &&
		len(r.AdHoc) == 0 && len(r.Areas) == 0 && (s.Related == nil || s.Related.Actions == nil || !s.Related.Actions.IncludeOriginalRecipients) {
		f.add("recipients", "no recipients: give contactIds, groups, distributionListIds, directory, adHoc or areas", nil)
	}
	for i, a := range r.AdHoc {
		if a.Email == "" && a.Phone == "" {
			f.add(fmt.Sprintf("recipients.adHoc[%d]", i), "an ad-hoc recipient needs an email or a phone", nil)
		}
		// One spelling per mailbox, the directory's: an ad-hoc entry is
		// one recipient with a contact or an earlier entry of the same
		// address only when both spell it alike.
		if a.Email != "" {
			e, err := emailaddr.Normalize(a.Email)
			if err != nil {
				f.add(fmt.Sprintf("recipients.adHoc[%d].email", i), err.Error(), a.Email)
			}
			s.Recipients.AdHoc[i].Email = e
		}
	}
	checkSender(&s, f)
	checkSocialMedia(&s, f)
	if d := r.Directory; d != nil && !d.AllUsers && len(d.UserIDs) == 0 {
		f.add("recipients.directory.userIds", "give userIds or set allUsers", nil)
	}
	if d := r.Directory; d != nil {
		for i, u := range d.UserIDs {
			if _, ok := ids.Parse(u); !ok {
				f.add(fmt.Sprintf("recipients.directory.userIds[%d]", i), "not a user id: give the id as it is written, without sign, spaces or leading zeros", u)
			}
		}
	}
	if af := r.AccessFilter; af != nil {
		for i, c := range af.Conditions {
			if (c.Operator == "Equals" || c.Operator == "NotEquals") && len(c.Values) != 1 {
				f.add(fmt.Sprintf("recipients.accessFilter.conditions[%d].values", i), c.Operator+" takes exactly one value", c.Values)
			}
		}
	}
	for i, a := range r.Areas {
		if _, _, err := alert.AreaOf(a); err != nil {
			f.add(fmt.Sprintf("recipients.areas[%d]", i), err.Error(), nil)
		}
	}
	// Errors are reported above (user ids, areas).
	p.spec, _ = storage.NewRecipientSpec(&s, p.channels)
	if err := h.checkReferences(ctx, tenant, s, f); err != nil {
		return nil, err
	}

	switch s.Type {
	case alert.TypePoll:
		if s.Survey == nil {
			f.add("survey", "a Poll alert needs survey questions", nil)
		} else {
			numberPoll(s.Survey, f)
		}
	case alert.TypeConference:
		if s.Conference == nil {
			f.add("conference", "a Conference alert needs the conference invitation", nil)
		}
	}
	if sc := s.Schedule; sc != nil && sc.Type != alert.ScheduleLater && sc.SendAt != nil {
		f.add("schedule.sendAt", "sendAt is only for a Later schedule: set type to Later, or leave sendAt out to send now", sc.SendAt.Format(time.RFC3339))
	}
	if sc := s.Schedule; sc != nil && sc.Type == alert.ScheduleLater {
		now := time.Now()
		switch {
		case sc.SendAt == nil:
			f.add("schedule.sendAt", "a Later schedule needs sendAt", nil)
		case !sc.SendAt.After(now):
			f.add("schedule.sendAt", "sendAt must be in the future", sc.SendAt.Format(time.RFC3339))
		case sc.SendAt.After(latestSendAt(now)):
			f.add("schedule.sendAt", fmt.Sprintf("sendAt may be at most a year ahead: no later than %s", latestSendAt(now).Format(time.RFC3339)),
				sc.SendAt.Format(time.RFC3339))
		default:
			t := sc.SendAt.UTC()
			p.sendAt = &t
		}
	}
	if pl := s.Pipeline; pl != nil {
		for i, c := range pl.Sequence {
			if !slices.Contains(p.channels, string(c)) {
				f.add(fmt.Sprintf("pipeline.sequence[%d]", i), "channel "+string(c)+" is not enabled", c)
			}
		}
	}
	if s.Priority != nil && s.Priority.LoudTone != nil && s.Priority.LoudTone.Enabled && s.Priority.Priority != alert.PriorityEmergency {
		f.add("priority.loudTone", "the loud tone is for Emergency alerts only", nil)
	}

	p.settings = s
	rd, err := alert.NewRenderer(tenant, 0, &p.settings, h.d.Config.PublicURL, nil)
	if err != nil {
		var fe *alert.FieldError
		if errors.As(err, &fe) {
			f.add(strings.TrimPrefix(fe.Field, "settings."), fe.Message, nil)
		} else {
			return nil, err
		}
	} else {
		p.renderer = rd
		checkText(&p.settings, rd, f)
		checkCAPSize(p.channels, rd, f)
	}
	if err := h.checkAttachments(ctx, tenant, &p.settings, p, f); err != nil {
		return nil, err
	}
	if err := h.checkChannelFiles(ctx, tenant, &p.settings, f); err != nil {
		return nil, err
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	if err := h.checkRelatedResolved(ctx, tenant, s, f); err != nil {
		return nil, err
	}
	return p, nil
}

// checkRelatedResolved refuses with a 409 an alert that includes the
// recipients of an earlier alert whose recipients are not resolved yet
// (Scheduled, or Queued for a moment): who that alert reaches is known only
// once it is sent, and the follow-up would go without them.
func (h *handler) checkRelatedResolved(ctx context.Context, tenant string, s alert.Settings, f *failures) error {
	rel := s.Related
	if rel == nil || rel.Actions == nil || !rel.Actions.IncludeOriginalRecipients {
		return nil
	}
	earlier, err := storage.GetAlert(ctx, h.d.DB, tenant, rel.AlertID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // reported by checkReferences
	}
	if err != nil {
		return rest.Unavailable("the database", err)
	}
	if earlier.ResolvedAt != nil {
		return nil
	}
	var detail string
	switch earlier.Status {
	case storage.AlertScheduled:
		detail = fmt.Sprintf("alert %d is scheduled and its recipients are resolved only when it is sent: include them once it is sent", earlier.ID)
		if at := earlier.ScheduledFor; at != nil {
			detail = fmt.Sprintf("alert %d is scheduled for %s and its recipients are resolved only when it is sent: include them once it is sent",
				earlier.ID, at.UTC().Format(time.RFC3339))
		}
	case storage.AlertQueued:
		detail = fmt.Sprintf("alert %d is resolving its recipients: retry in a moment", earlier.ID)
	default:
		return nil // it ended before resolving anyone: there is no one to include
	}
	f.add("related.actions.includeOriginalRecipients", detail, true)
	return rest.Problem(http.StatusConflict, detail, f.list...)
}

// applyDefaults fills what the alert leaves out from the tenant's
// defaults, by one rule (README, Defaults): a block both give is filled
// field by field, at every depth; whatever else the alert gives (a
// string, number, boolean or list, "", 0 and false too) wins whole. The
// defaults' channels are a list, so an alert with a channels block picks
// its channels itself; the default loud tone is for an Emergency alert.
func applyDefaults(s model.AlertSettings, d model.AlertDefaults) (model.AlertSettings, error) {
	if s.Type == "" {
		s.Type = d.Type
	}
	if s.Channels == nil {
		s.Channels = enabledChannels(d.Channels)
	}
	p := &model.PrioritySettings{Priority: d.Priority}
	if s.Priority != nil {
		p.Priority = s.Priority.Priority
	}
	if d.LoudTone && p.Priority == model.PriorityEmergency {
		p.LoudTone = &model.LoudToneSettings{Enabled: true}
	}
	var err error
	if s.Priority, err = fill(s.Priority, p); err != nil {
		return s, err
	}
	if s.Workflow, err = fill(s.Workflow, &d.Workflow); err != nil {
		return s, err
	}
	if s.Sender, err = fill(s.Sender, &d.Sender); err != nil {
		return s, err
	}
	if s.Schedule == nil {
		s.Schedule = &model.ScheduleSettings{Type: model.ScheduleNow}
	}
	return s, nil
}

// fill returns given with what it leaves out taken from def, through their
// JSON form: objects field by field at every depth, anything else given
// wins whole. A default that holds nothing adds nothing.
func fill[T any](given, def *T) (*T, error) {
	var d map[string]any
	if err := remarshal(def, &d); err != nil {
		return nil, err
	}
	if len(d) == 0 {
		return given, nil
	}
	g := map[string]any{}
	if given != nil {
		if err := remarshal(given, &g); err != nil {
			return nil, err
		}
	}
	out := new(T)
	if err := remarshal(fillObject(g, d), out); err != nil {
		return nil, err
	}
	return out, nil
}

// fillObject adds to g what it leaves out of d, recursing into the
// objects both hold.
func fillObject(g, d map[string]any) map[string]any {
	for k, dv := range d {
		gv, ok := g[k]
		if !ok {
			g[k] = dv
			continue
		}
		gm, gObj := gv.(map[string]any)
		dm, dObj := dv.(map[string]any)
		if gObj && dObj {
			g[k] = fillObject(gm, dm)
		}
	}
	return g
}

// remarshal copies from into to through JSON, numbers kept exact.
func remarshal(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return fmt.Errorf("apply defaults: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(to); err != nil {
		return fmt.Errorf("apply defaults: %w", err)
	}
	return nil
}

// enabledChannels enables the named channels with their settings left out.
func enabledChannels(names []model.DeliveryChannel) *model.ChannelSettings {
	c := &model.ChannelSettings{}
	for _, ch := range names {
		switch ch {
		case "email":
			c.Email = &model.EmailChannel{Enabled: true}
		case "text":
			c.Text = &model.TextMessageChannel{Enabled: true}
		case "voice":
			c.Voice = &model.VoiceChannel{Enabled: true}
		case "etn":
			c.Etn = &model.EtnChannel{Enabled: true}
		case "push":
			c.Push = &model.PushChannel{Enabled: true}
		case "myAlertsApp":
			c.MyAlertsApp = &model.MyAlertsAppChannel{Enabled: true}
		case "fax":
			c.Fax = &model.FaxChannel{Enabled: true}
		case "eas":
			c.Eas = &model.EasChannel{Enabled: true}
		case "mobileBroadcast":
			c.MobileBroadcast = &model.MobileBroadcastChannel{Enabled: true}
		case "teamChat":
			c.TeamChat = &model.TeamChatChannel{Enabled: true}
		case "socialPostA":
			c.SocialPostA = &model.SocialPostChannelA{Enabled: true}
		case "socialPostB":
			c.SocialPostB = &model.SocialPostChannelB{Enabled: true}
		case "neighborhood":
			c.Neighborhood = &model.NeighborhoodChannel{Enabled: true}
		}
	}
	return c
}

// numberPoll assigns question and option ids where absent and checks that
// question ids and option ids are each unique within the alert (answers are
// recorded by them).
func numberPoll(sv *alert.SurveySettings, f *failures) {
	usedQ, usedO := map[int]bool{}, map[int]bool{}
	for i, q := range sv.Questions {
		if q.ID > 0 {
			if usedQ[q.ID] {
				f.add(fmt.Sprintf("survey.questions[%d].id", i), fmt.Sprintf("question id %d is used twice", q.ID), q.ID)
			}
			usedQ[q.ID] = true
		}
		for j, o := range q.Options {
			if o.ID > 0 {
				if usedO[o.ID] {
					f.add(fmt.Sprintf("survey.questions[%d].options[%d].id", i, j), fmt.Sprintf("option id %d is used twice", o.ID), o.ID)
				}
				usedO[o.ID] = true
			}
		}
	}
	nextQ, nextO := 1, 1
	for i := range sv.Questions {
		q := &sv.Questions[i]
		assignFreeID(&q.ID, usedQ, &nextQ)
		for j := range q.Options {
			assignFreeID(&q.Options[j].ID, usedO, &nextO)
		}
	}
}

// assignFreeID gives *id, where absent, the lowest number from *next on that
// is not used yet, and marks it used.
func assignFreeID(id *int, used map[int]bool, next *int) {
	if *id != 0 {
		return
	}
	for used[*next] {
		*next++
	}
	*id = *next
	used[*next] = true
}

// checkText refuses text messages that cannot fit their segment limit or
// need UCS-2 when it is not allowed. The text measured is the one delivery
// writes (sampleMessage) before fitting it to the limit: the alert's own
// variables filled, the conference line and the response link (a short
// link of the real length) appended; only each recipient's own values count
// as empty. Delivery shortens a recipient's text that they make longer.
func checkText(s *alert.Settings, rd *alert.Renderer, f *failures) {
	c := s.Channels
	if c == nil || c.Text == nil || !c.Text.Enabled {
		return
	}
	field := "message.body"
	if c.Text.Body != "" {
		field = "channels.text.body"
	}
	_, written := sampleMessage(rd, string(channels.Text), &alert.Recipient{})
	enc, units, segments := alertmsg.SMSInfo(written)
	if limit := s.TextSegments(); segments > limit {
		f.add(field, fmt.Sprintf("the text message takes %d %s segments (%d characters), more than the limit of %d; shorten it or raise channels.text.maxSegments (at most 10)",
			segments, enc, units, limit), nil)
	}
	if enc == alertmsg.UCS2 && s.TextGSM7Only() {
		f.add(field, "the text needs UCS-2 (characters outside the GSM-7 alphabet) but allowUnicode is false", nil)
	}
}

// checkCAPSize refuses areas whose CAP document (EAS, mobile broadcast)
// would carry more coordinate pairs than cap.MaxPoints, where the alert
// is made rather than when its document is sent.
func checkCAPSize(enabled []string, rd *alert.Renderer, f *failures) {
	for _, ch := range cap.Channels {
		if !slices.Contains(enabled, string(ch)) {
			continue
		}
		m, _ := sampleMessage(rd, string(ch), &alert.Recipient{})
		if n := cap.InputOf(rd, &m).Points(); n > cap.MaxPoints {
			f.add("recipients.areas", fmt.Sprintf("the %s CAP document would carry %d coordinate pairs (each polygon's and one per circle, in each of its language blocks), more than the %d a document may carry: simplify the polygons or name fewer languages",
				ch, n, cap.MaxPoints), nil)
		}
	}
}

// checkTextOf checks the text of the alert whose id is now known, so
// {{alertId}} counts as sent (prepare counted it as 0).
func (h *handler) checkTextOf(tenant string, id int64, s *alert.Settings, loc, prefix string) error {
	rd, err := alert.NewRenderer(tenant, id, s, h.d.Config.PublicURL, nil)
	if err != nil {
		return err
	}
	f := newFailures(loc, prefix)
	checkText(s, rd, f)
	return f.err()
}

// sampleMessage is the message rd's alert sends rec on channel ch, with
// the sample response link (alert.Renderer.SampleLink) in place of rec's
// own: what the preview and the alert's details show, as long as the one
// delivery sends a recipient with rec's values (a text shortened to fit
// its segment limit as delivery shortens it), and its text as written,
// before that shortening, which the submission check measures.
func sampleMessage(rd *alert.Renderer, ch string, rec *alert.Recipient) (m channels.Message, written string) {
	return rd.Message(ch, rec, rd.SampleLink())
}

// checkReferences checks that the contacts, groups, lists, directory users
// and related alert exist in the tenant.
func (h *handler) checkReferences(ctx context.Context, tenant string, s alert.Settings, f *failures) error {
	r := s.Recipients
	var groupIDs []int64
	for _, g := range r.Groups {
		groupIDs = append(groupIDs, g.ID)
	}
	checks := []struct {
		table, field string
		ids          []int64
	}{
		{"people", "recipients.contactIds", r.ContactIDs},
		{"groups", "recipients.groups", groupIDs},
		{"distribution_lists", "recipients.distributionListIds", r.DistributionListIDs},
	}
	if s.Related != nil {
		checks = append(checks, struct {
			table, field string
			ids          []int64
		}{"alerts", "related.alertId", []int64{s.Related.AlertID}})
	}
	for _, c := range checks {
		missing, err := storage.MissingIDs(ctx, h.d.DB, tenant, c.table, c.ids)
		if err != nil {
			return rest.Unavailable("the database", err)
		}
		if len(missing) > 0 {
			what := map[string]string{"people": "contacts", "groups": "groups", "distribution_lists": "distribution lists", "alerts": "alerts"}[c.table]
			f.add(c.field, fmt.Sprintf("unknown %s: %v", what, missing), missing)
		}
	}
	if d := r.Directory; d != nil && !d.AllUsers && len(d.UserIDs) > 0 {
		for _, u := range d.UserIDs {
			if _, ok := ids.Parse(u); !ok {
				return nil // reported by prepare
			}
		}
		spec, err := alert.RecipientSpecOf(alert.Recipients{Directory: d})
		if err != nil {
			return nil // reported by prepare
		}
		missing, err := storage.MissingDirectoryUsers(ctx, h.d.DB, tenant, d.DirectoryID, spec.DirectoryUserIDs)
		if err != nil {
			return rest.Unavailable("the database", err)
		}
		if len(missing) > 0 {
			f.add("recipients.directory.userIds", fmt.Sprintf("unknown users of directory %s: %v", d.DirectoryID, missing), missing)
		}
	}
	return h.checkPointLists(ctx, tenant, s.Channels, f)
}

// checkPointLists checks that the ETN address-point lists the alert names
// exist in the tenant, enabled block or not (as its files are checked): a
// list that does not would add no number to call, silently.
func (h *handler) checkPointLists(ctx context.Context, tenant string, c *alert.Channels, f *failures) error {
	if c == nil || c.Etn == nil {
		return nil
	}
	lists := c.Etn.AddressPointLists
	missing, err := channelstate.MissingPointLists(ctx, h.d.DB, tenant, lists)
	if err != nil {
		return rest.Unavailable("the database", err)
	}
	for i, name := range lists {
		if slices.Contains(missing, name) {
			f.add(fmt.Sprintf("channels.etn.addressPointLists[%d]", i),
				"no address-point list of this name; PUT /v2/settings/etn/addressPointLists/{name} imports one", name)
		}
	}
	return nil
}

// checkAttachments resolves the stored files the alert attaches: files of
// the tenant by their full name (folder/name, as the files operations name
// them), whose original version is attached.
func (h *handler) checkAttachments(ctx context.Context, tenant string, s *alert.Settings, p *prepared, f *failures) error {
	if s.Content == nil || len(s.Content.Attachments) == 0 {
		return nil
	}
	var total int64
	first := map[string]int{}
	for i, name := range s.Content.Attachments {
		field := fmt.Sprintf("content.attachments[%d]", i)
		if j, ok := first[name]; ok {
			f.add(field, fmt.Sprintf("%s is attached already (content.attachments[%d])", name, j), name)
			continue
		}
		first[name] = i
		if err := fileservice.CheckPath(name); err != nil {
			f.add(field, "not a file name: "+err.Error(), name)
			continue
		}
		ref, err := h.files.Original(ctx, tenant, name)
		if errors.Is(err, storage.ErrNotFound) {
			f.add(field, "no stored file "+name, name)
			continue
		}
		if err != nil {
			return rest.Unavailable("the database", err)
		}
		ref.FullName = name
		total += ref.Size
		p.attachments = append(p.attachments, ref)
	}
	if total > MaxAttachmentBytes {
		f.add("content.attachments", fmt.Sprintf("the attachments take %d bytes, more than %d", total, MaxAttachmentBytes), nil)
	}
	return nil
}

// checkChannelFiles checks the stored files the channel blocks name (the
// voice and ETN audio, the EAS audio, the fax document) as delivery
// resolves them (catalog.Resolve): each must exist, be of the kind its
// channel uses (audio to play, a faxable document) and have the version
// the channel uses (an EAS version for EAS). A disabled block's file is
// checked too, as its texts are.
func (h *handler) checkChannelFiles(ctx context.Context, tenant string, s *alert.Settings, f *failures) error {
	named := catalog.NamedFiles(s.Channels)
	if len(named) == 0 {
		return nil
	}
	names := make([]string, len(named))
	for i, n := range named {
		names[i] = n.Name
	}
	rows, err := storage.FileAssetsNamed(ctx, h.d.DB, tenant, names)
	if err != nil {
		return rest.Unavailable("the database", err)
	}
	for _, n := range named {
		if err := fileservice.CheckPath(n.Name); err != nil {
			f.add(n.Field, "not a file name: "+err.Error(), n.Name)
		} else if _, err := catalog.Resolve(n.Use, n.Name, rows); err != nil {
			f.add(n.Field, err.Error(), n.Name)
		}
	}
	return nil
}

func settingsJSON(s alert.Settings) (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode settings: %w", err)
	}
	return b, nil
}

// holdNames puts the names the settings give of things of the tenant (a
// directory, address-point lists) in the form they are stored in (NFC,
// names.Normal), and holds the names of ad-hoc recipients to the rule of
// names, which people's names follow (internal/names), adding a failure
// for each it refuses.
func holdNames(s *alert.Settings, f *failures) {
	if d := s.Recipients.Directory; d != nil {
		d.DirectoryID = names.Normal(d.DirectoryID)
	}
	if c := s.Channels; c != nil && c.Etn != nil {
		for i, n := range c.Etn.AddressPointLists {
			c.Etn.AddressPointLists[i] = names.Normal(n)
		}
	}
	for i := range s.Recipients.AdHoc {
		a := &s.Recipients.AdHoc[i]
		for _, n := range []struct {
			field string
			v     *string
		}{{"firstName", &a.FirstName}, {"lastName", &a.LastName}} {
			v, err := names.Check(*n.v)
			if err != nil {
				f.add(fmt.Sprintf("recipients.adHoc[%d].%s", i, n.field), err.Error(), *n.v)
			}
			*n.v = v
		}
	}
}
