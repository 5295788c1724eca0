package alerting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/channels/catalog"
	"github.com/tocsin/tocsin/internal/alertmsg"
	"github.com/tocsin/tocsin/storage"
)

// Limits of an alert beyond the ones its schema states.
const (
	// DefaultMaxSegments is the SMS segment limit when TextMessageChannel.maxSegments is absent.
	DefaultMaxSegments = 10
	// MaxScheduleAhead is how far ahead an alert may be scheduled.
	MaxScheduleAhead = 366 * 24 * time.Hour
	// linkAllowance is the room kept in a text for an appended response link.
	linkAllowance = 120
	// MaxAttachmentBytes bounds the attachments of one alert together.
	MaxAttachmentBytes = 10 << 20
)

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
	f := &failures{loc: loc, prefix: strings.TrimSuffix(prefix+".settings", ".settings")}
	if prefix == "" {
		f.prefix = "settings"
	} else {
		f.prefix = prefix + ".settings"
	}
	defs, _, err := h.defaults(ctx, tenant)
	if err != nil {
		return nil, err
	}
	withDefaults := in
	applyDefaults(&withDefaults, defs)
	s, err := settingsOf(withDefaults)
	if err != nil {
		return nil, err
	}
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
	}
	if d := r.Directory; d != nil && !d.AllUsers && len(d.UserIDs) == 0 {
		f.add("recipients.directory.userIds", "give userIds or set allUsers", nil)
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
	who, err := alert.RecipientSpecOf(r)
	if err != nil {
		if strings.HasPrefix(err.Error(), "directory") {
			f.add("recipients.directory.userIds", err.Error(), nil)
		}
	} else {
		p.spec = storage.RecipientSpec{RecipientSpec: who}
	}
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
		case sc.SendAt.Sub(now) > MaxScheduleAhead:
			f.add("schedule.sendAt", "sendAt may be at most a year ahead", sc.SendAt.Format(time.RFC3339))
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
	return p, nil
}

// applyDefaults fills what the alert leaves out from the tenant's defaults.
func applyDefaults(s *model.AlertSettings, d model.AlertDefaults) {
	if s.Type == "" {
		s.Type = d.Type
	}
	if s.Channels == nil {
		c := &model.ChannelSettings{}
		for _, ch := range d.Channels {
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
		s.Channels = c
	}
	if s.Priority == nil {
		s.Priority = &model.PrioritySettings{Priority: d.Priority}
		if d.Priority == model.PriorityEmergency && d.LoudTone {
			s.Priority.LoudTone = &model.LoudToneSettings{Enabled: true}
		}
	}
	if s.Workflow == nil {
		w := d.Workflow
		s.Workflow = &w
	}
	if s.Sender == nil && (d.Sender != model.SenderSettings{}) {
		snd := d.Sender
		s.Sender = &snd
	}
	if s.Schedule == nil {
		s.Schedule = &model.ScheduleSettings{Type: model.ScheduleNow}
	}
}

// numberPoll assigns question and option ids where absent and checks that
// option ids are unique within the alert.
func numberPoll(sv *alert.SurveySettings, f *failures) {
	usedQ, usedO := map[int]bool{}, map[int]bool{}
	for _, q := range sv.Questions {
		if q.ID > 0 {
			usedQ[q.ID] = true
		}
		for _, o := range q.Options {
			if o.ID > 0 {
				if usedO[o.ID] {
					f.add("survey", fmt.Sprintf("option id %d is used twice", o.ID), o.ID)
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
// need UCS-2 when it is not allowed. Variables count as empty, and room is
// kept for an appended response link.
func checkText(s *alert.Settings, rd *alert.Renderer, f *failures) {
	c := s.Channels
	if c == nil || c.Text == nil || !c.Text.Enabled {
		return
	}
	field, text := "message.body", s.Message.Body
	if c.Text.Body != "" {
		field, text = "channels.text.body", c.Text.Body
	}
	tpl, err := alertmsg.Compile(text)
	if err != nil {
		return
	}
	bare := tpl.Render(func(string) string { return "" })
	if rd.NeedsLink() && !tpl.Uses("responseLink") {
		bare += strings.Repeat("x", linkAllowance)
	}
	enc, units, segments := alertmsg.SMSInfo(bare)
	limit := c.Text.MaxSegments
	if limit == 0 {
		limit = DefaultMaxSegments
	}
	if segments > limit {
		f.add(field, fmt.Sprintf("the text message takes %d %s segments (%d characters), more than the limit of %d; shorten it or raise channels.text.maxSegments (at most 10)",
			segments, enc, units, limit), nil)
	}
	if enc == alertmsg.UCS2 && c.Text.AllowUnicode != nil && !*c.Text.AllowUnicode {
		f.add(field, "the text needs UCS-2 (characters outside the GSM-7 alphabet) but allowUnicode is false", nil)
	}
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
	for i, name := range s.Content.Attachments {
		field := fmt.Sprintf("content.attachments[%d]", i)
		if !safeName(name) {
			f.add(field, "not a file name", name)
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
		if _, err := catalog.Resolve(n.Use, n.Name, rows); err != nil {
			f.add(n.Field, err.Error(), n.Name)
		}
	}
	return nil
}

func safeName(name string) bool {
	if name == "" || len(name) > 512 || strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.Contains(name, "\\") {
		return false
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func settingsJSON(s alert.Settings) (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode settings: %w", err)
	}
	return b, nil
}
