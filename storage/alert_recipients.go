package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/channels"
)

// RecipientSpec is the query that resolves an alert's recipients: who
// (alert.RecipientSpec) and which of their addresses to look up.
type RecipientSpec struct {
	alert.RecipientSpec

	// Which addresses to look up.
	NeedEmail, NeedTextPhone, NeedVoicePhone bool
	// CustomFields are the keys of the custom fields the alert's texts
	// read (alert.Renderer.CustomFields): only they are copied from a
	// recipient's, which may hold hundreds.
	CustomFields []string
}

// NewRecipientSpec is the query that resolves the recipients of an alert
// with settings s on the channels chs, for its preview and for its
// delivery alike: who the settings name (alert.RecipientSpecOf), with the
// earlier alert's recipients when related.actions.includeOriginalRecipients
// is set, the addresses the channels read from a recipient's row and the
// custom fields the texts read (none when a text does not compile, which
// submission refuses).
func NewRecipientSpec(s *alert.Settings, chs []string) (RecipientSpec, error) {
	who, err := alert.RecipientSpecOf(s.Recipients)
	if err != nil {
		return RecipientSpec{}, err
	}
	if r := s.Related; r != nil && r.Actions != nil && r.Actions.IncludeOriginalRecipients {
		who.RelatedAlertID = r.AlertID
	}
	spec := RecipientSpec{RecipientSpec: who}
	if rd, err := alert.NewRenderer("", 0, s, "", nil); err == nil {
		spec.CustomFields = rd.CustomFields()
	}
	areas, _ := alert.AreasOf(s.Recipients.Areas)
	for _, ch := range chs {
		if channels.Channel(ch) == channels.Etn && len(areas.Places()) > 0 {
			// ETN with areas calls the numbers inside them, never a
			// recipient's phone.
			continue
		}
		switch channels.Channel(ch).Addresses() {
		case channels.RecipientEmail:
			spec.NeedEmail = true
		case channels.RecipientPhone:
			spec.NeedTextPhone = true
		case channels.RecipientVoicePhone:
			spec.NeedVoicePhone = true
		}
	}
	return spec, nil
}

// sources is the UNION ALL of (person_id, mandatory) rows of every source.
// $1 is the tenant.
func (s RecipientSpec) sources(a *Args) string {
	var parts []string
	if len(s.ContactIDs) > 0 {
		parts = append(parts, `SELECT id AS person_id, true AS mandatory FROM people WHERE tenant_id = $1 AND id = ANY(`+a.Add(pq.Int64Array(s.ContactIDs))+`)`)
	}
	if len(s.GroupIDs) > 0 {
		parts = append(parts, `SELECT person_id, false FROM group_memberships WHERE tenant_id = $1 AND group_id = ANY(`+a.Add(pq.Int64Array(s.GroupIDs))+`)`)
	}
	if len(s.SubtreeGroupIDs) > 0 {
		parts = append(parts, `SELECT m.person_id, false FROM groups g
			JOIN groups sub ON sub.tenant_id = $1 AND sub.path LIKE g.path || '%'
			JOIN group_memberships m ON m.group_id = sub.id
			WHERE g.tenant_id = $1 AND g.id = ANY(`+a.Add(pq.Int64Array(s.SubtreeGroupIDs))+`)`)
	}
	if len(s.ListIDs) > 0 {
		parts = append(parts, `SELECT person_id, false FROM distribution_list_members WHERE tenant_id = $1 AND list_id = ANY(`+a.Add(pq.Int64Array(s.ListIDs))+`)`)
	}
	if s.DirectoryID != "" {
		q := `SELECT id, ` + strconv.FormatBool(!s.AllDirectoryUsers) + ` FROM people WHERE tenant_id = $1 AND directory_id = ` + a.Add(s.DirectoryID)
		if !s.AllDirectoryUsers {
			q += ` AND id = ANY(` + a.Add(pq.Int64Array(s.DirectoryUserIDs)) + `)`
		}
		parts = append(parts, q)
	}
	for _, p := range s.Places() {
		parts = append(parts, `SELECT person_id, false FROM person_locations WHERE tenant_id = $1 AND `+InsidePlace(a, p, "latitude", "longitude"))
	}
	if s.RelatedAlertID > 0 {
		// The earlier alert's people, selected directly or not as they were there.
		parts = append(parts, `SELECT person_id, is_mandatory FROM alert_recipients WHERE tenant_id = $1 AND alert_id = `+a.Add(s.RelatedAlertID)+` AND person_id IS NOT NULL`)
	}
	if len(parts) == 0 {
		return `SELECT NULL::bigint AS person_id, false AS mandatory WHERE false`
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

func (s RecipientSpec) filter(a *Args) string {
	if s.Filter == nil || len(s.Filter.Conditions) == 0 {
		return "true"
	}
	var conds []string
	for _, c := range s.Filter.Conditions {
		var col string
		switch {
		case c.Field == "language":
			col = "p.language"
		case c.Field == "timeZone":
			col = "p.time_zone"
		case c.Field == "externalId":
			col = "coalesce(p.external_id, '')"
		case strings.HasPrefix(c.Field, "custom."):
			col = "coalesce(p.custom_fields ->> " + a.Add(strings.TrimPrefix(c.Field, "custom.")) + ", '')"
		default:
			continue
		}
		switch c.Op {
		case "Equals":
			conds = append(conds, col+" = "+a.Add(first(c.Values)))
		case "NotEquals":
			conds = append(conds, col+" <> "+a.Add(first(c.Values)))
		case "In":
			conds = append(conds, col+" = ANY("+a.Add(pq.StringArray(c.Values))+")")
		case "NotIn":
			conds = append(conds, "NOT ("+col+" = ANY("+a.Add(pq.StringArray(c.Values))+"))")
		}
	}
	if len(conds) == 0 {
		return "true"
	}
	op := " AND "
	if s.Filter.Any {
		op = " OR "
	}
	return "(" + strings.Join(conds, op) + ")"
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// selection is the query of resolved people with their addresses,
// numbered 1..n by person id (seq). $1 is the tenant.
func (s RecipientSpec) selection(a *Args) string {
	email, text, voice, custom := "NULL::text", "NULL::text", "NULL::text", "NULL::jsonb"
	if s.NeedEmail {
		email = `(SELECT e.address FROM person_emails e WHERE e.person_id = p.id ORDER BY e.id LIMIT 1)`
	}
	if s.NeedTextPhone {
		text = `(SELECT ph.number FROM person_phones ph WHERE ph.person_id = p.id AND ph.can_text ORDER BY ph.id LIMIT 1)`
	}
	if s.NeedVoicePhone {
		voice = `(SELECT ph.number FROM person_phones ph WHERE ph.person_id = p.id AND ph.can_call ORDER BY ph.id LIMIT 1)`
	}
	if len(s.CustomFields) > 0 {
		custom = fmt.Sprintf(`(SELECT jsonb_object_agg(k, p.custom_fields -> k) FROM unnest(%s::text[]) AS k WHERE p.custom_fields ? k)`,
			a.Add(pq.StringArray(s.CustomFields)))
	}
	src := s.sources(a)
	where := s.filter(a)
	return `WITH src (person_id, mandatory) AS (` + src + `),
		sel AS (SELECT person_id, bool_or(mandatory) AS mandatory FROM src WHERE person_id IS NOT NULL GROUP BY person_id)
		SELECT row_number() OVER (ORDER BY p.id) AS seq, p.id AS person_id, coalesce(p.external_id, '') AS external_id, p.first_name, p.last_name,
			` + email + ` AS email, ` + text + ` AS phone, ` + voice + ` AS voice_phone, ` + custom + ` AS custom_fields,
			sel.mandatory AS is_mandatory,
			NULL::bigint AS email_reached_as, NULL::bigint AS phone_reached_as, NULL::bigint AS voice_phone_reached_as
		FROM sel JOIN people p ON p.id = sel.person_id AND p.tenant_id = $1
		WHERE ` + where
}

// resolution is the query of an alert's recipients, numbered 1..n (seq):
// the people the selection resolves to, by person id, then the ad-hoc
// entries (AdHoc, then the earlier alert's ad-hoc recipients) that are
// recipients of their own, in order. It is the one rule of who an alert
// reaches: ResolveRecipients writes its rows, CountRecipients counts them
// and SampleRecipient reads one. $1 is the tenant.
//
// One person is one recipient, and every address given gets one message
// per channel, none two. An ad-hoc entry names a resolved person when its
// email is one of the person's addresses or its phone one of their
// numbers (the person is then selected directly: mandatory), and names an
// earlier entry that shares its email or phone. On each channel of the
// alert that reads the row (email, text, voice) the entry's address is
// reached already when a resolved person's row or an earlier entry holds
// it there; its row then names that recipient (*_reached_as) and its
// delivery there is Skipped. An entry that names someone and brings no
// address the alert's channels do not reach already is no recipient of
// its own; any other entry is one, keeping every address it gives.
//
// The lookups go through the (tenant_id, address) and (tenant_id, number)
// indexes, once per ad-hoc entry; the people are read once more to find
// the rows the entries name (hashed) and once to count them, and the
// windows and joins over the entries are hashed or sorted over the
// entries only, so the statement stays linear in the people and the
// entries, and the people keep their numbers without a sort.
func (s RecipientSpec) resolution(a *Args) string {
	people := s.selection(a)
	if len(s.AdHoc) == 0 && s.RelatedAlertID == 0 {
		return people
	}
	var first, last, email, phone []string
	for _, r := range s.AdHoc {
		first, last, email, phone = append(first, r.FirstName), append(last, r.LastName), append(email, r.Email), append(phone, r.Phone)
	}
	// For each address column an entry's row holds: whether the alert
	// reads it, the entry's address, and the holder of the same address
	// among the people (held.*) and among the entries (*_first).
	type column struct {
		need                       bool
		addr, person, first, entry string
	}
	cols := []column{
		{s.NeedEmail, "email", "email_person", "email_first", "fe"},
		{s.NeedTextPhone, "phone", "text_person", "phone_first", "fp"},
		{s.NeedVoicePhone, "phone", "voice_person", "phone_first", "fp"},
	}
	var fresh, reached []string
	for _, c := range cols {
		if !c.need {
			reached = append(reached, "NULL::bigint")
			continue
		}
		// The address is the entry's own when no person holds it and no
		// earlier entry has it; else it is reached as the person, or as the
		// first entry of it (fe, fp), which is a recipient of its own since
		// no person holds it.
		fresh = append(fresh, fmt.Sprintf("(e.%[1]s <> '' AND e.%[2]s IS NULL AND e.%[3]s = e.ord)", c.addr, c.person, c.first))
		reached = append(reached, fmt.Sprintf(`CASE WHEN k.%[1]s <> '' THEN coalesce(k.%[2]s, nullif(%[3]s.seq, k.seq)) END`,
			c.addr, c.person, c.entry))
	}
	keep := "NOT e.names"
	if len(fresh) > 0 {
		keep += " OR " + strings.Join(fresh, " OR ")
	}
	// t: the entries given, then the earlier alert's ad-hoc recipients
	// (none when RelatedAlertID is zero).
	return fmt.Sprintf(`WITH r AS (%s),
	t AS (
		SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS t(first, last, email, phone, ord)
		UNION ALL
		SELECT o.first_name, o.last_name, coalesce(o.email, ''), coalesce(o.phone, ''), %d + o.seq
		FROM alert_recipients o WHERE o.tenant_id = $1 AND o.alert_id = %s AND o.person_id IS NULL),
	named AS MATERIALIZED (
		SELECT t.ord, t.email, t.phone, m.person_id FROM t
		JOIN LATERAL (
			SELECT e.person_id FROM person_emails e WHERE t.email <> '' AND e.tenant_id = $1 AND e.address = t.email
			UNION SELECT ph.person_id FROM person_phones ph WHERE t.phone <> '' AND ph.tenant_id = $1 AND ph.number = t.phone
		) m ON true),
	held AS (
		SELECT n.ord, min(r.seq) FILTER (WHERE r.email = n.email) AS email_person,
			min(r.seq) FILTER (WHERE r.phone = n.phone) AS text_person, min(r.seq) FILTER (WHERE r.voice_phone = n.phone) AS voice_person
		FROM named n JOIN r ON r.person_id = n.person_id GROUP BY n.ord),
	e AS (
		SELECT t.*, h.email_person, h.text_person, h.voice_person,
			CASE WHEN t.email <> '' THEN min(t.ord) OVER (PARTITION BY t.email) END AS email_first,
			CASE WHEN t.phone <> '' THEN min(t.ord) OVER (PARTITION BY t.phone) END AS phone_first,
			h.ord IS NOT NULL OR (t.email <> '' AND min(t.ord) OVER (PARTITION BY t.email) < t.ord)
				OR (t.phone <> '' AND min(t.ord) OVER (PARTITION BY t.phone) < t.ord) AS names
		FROM t LEFT JOIN held h ON h.ord = t.ord),
	kept AS MATERIALIZED (
		SELECT e.*, (SELECT count(*) FROM r) + row_number() OVER (ORDER BY e.ord) AS seq FROM e WHERE %s)
	SELECT r.seq, r.person_id, r.external_id, r.first_name, r.last_name, r.email, r.phone, r.voice_phone,
		r.custom_fields, r.is_mandatory OR r.person_id IN (SELECT n.person_id FROM named n) AS is_mandatory,
		r.email_reached_as, r.phone_reached_as, r.voice_phone_reached_as
	FROM r
	UNION ALL
	SELECT k.seq, NULL, '', k.first, k.last, nullif(k.email, ''), nullif(k.phone, ''), nullif(k.phone, ''), NULL, true, %s
	FROM kept k LEFT JOIN kept fe ON fe.ord = k.email_first LEFT JOIN kept fp ON fp.ord = k.phone_first`,
		people, a.Add(pq.StringArray(first)), a.Add(pq.StringArray(last)), a.Add(pq.StringArray(email)), a.Add(pq.StringArray(phone)),
		len(s.AdHoc), a.Add(s.RelatedAlertID), keep, strings.Join(reached, ", "))
}

// ResolveRecipients writes the recipients of an alert into alert_recipients
// with one INSERT ... SELECT of their resolution, numbering them 1..n. It
// runs inside tx; a second call for the same alert does nothing and
// returns the count written the first time.
func ResolveRecipients(ctx context.Context, tx *sqlx.Tx, tenant string, alertID int64, s RecipientSpec) (int64, error) {
	var resolved bool
	var count int64
	if err := tx.QueryRowxContext(ctx, `SELECT resolved_at IS NOT NULL, recipient_count FROM alerts WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
		tenant, alertID).Scan(&resolved, &count); err != nil {
		return 0, NotFound(err)
	}
	if resolved {
		return count, nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM alert_recipients WHERE alert_id = $1`, alertID); err != nil {
		return 0, fmt.Errorf("clear recipients: %w", err)
	}
	a := &Args{}
	a.Add(tenant)
	alert := a.Add(alertID)
	res, err := tx.ExecContext(ctx, `INSERT INTO alert_recipients (tenant_id, alert_id, seq, person_id, external_id,
			first_name, last_name, email, phone, voice_phone, custom_fields, is_mandatory,
			email_reached_as, phone_reached_as, voice_phone_reached_as)
		SELECT $1, `+alert+`, r.seq, r.person_id, r.external_id, r.first_name, r.last_name,
			r.email, r.phone, r.voice_phone, r.custom_fields, r.is_mandatory,
			r.email_reached_as, r.phone_reached_as, r.voice_phone_reached_as
		FROM (`+s.resolution(a)+`) r`, a.Values...)
	if err != nil {
		return 0, fmt.Errorf("resolve recipients: %w", err)
	}
	count, _ = res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `UPDATE alerts SET resolved_at = now(), recipient_count = $3 WHERE tenant_id = $1 AND id = $2`,
		tenant, alertID, count); err != nil {
		return 0, fmt.Errorf("record recipient count: %w", err)
	}
	return count, nil
}

// RecipientCounts count an alert's recipients: in all, the ad-hoc ones,
// and on each channel asked about those with an address there.
type RecipientCounts struct {
	Total, AdHoc int64
	// PerChannel counts, for each channel asked about in order, the
	// recipients with an address on it.
	PerChannel []int64
}

// countColumns is the one rule of the counts, over recipient rows r (of a
// resolution or of alert_recipients): every row, the rows of no person,
// and for each channel the rows with an address where the channel reads
// it (channels.Addresses): the row's own column, when no earlier
// recipient reaches it (*_reached_as), or the person's fax
// numbers or devices of the channel's app, as delivery reads them. A
// channel not addressed per recipient counts none. $1 is the tenant.
func countColumns(a *Args, chs []channels.Descriptor) string {
	cols := []string{"count(*)", "count(*) FILTER (WHERE r.person_id IS NULL)"}
	for _, d := range chs {
		switch d.Addresses() {
		case channels.RecipientEmail:
			cols = append(cols, "count(r.email) FILTER (WHERE r.email_reached_as IS NULL)")
		case channels.RecipientPhone:
			cols = append(cols, "count(r.phone) FILTER (WHERE r.phone_reached_as IS NULL)")
		case channels.RecipientVoicePhone:
			cols = append(cols, "count(r.voice_phone) FILTER (WHERE r.voice_phone_reached_as IS NULL)")
		case channels.FaxNumber:
			cols = append(cols, `count(*) FILTER (WHERE EXISTS (SELECT 1 FROM person_phones f
				WHERE f.tenant_id = $1 AND f.person_id = r.person_id AND f.phone_type = 'Fax'))`)
		case channels.DeviceTokens:
			cols = append(cols, `count(*) FILTER (WHERE EXISTS (SELECT 1 FROM person_devices d
				WHERE d.tenant_id = $1 AND d.person_id = r.person_id AND d.app = `+a.Add(d.App)+`))`)
		default:
			cols = append(cols, "0::bigint")
		}
	}
	return strings.Join(cols, ", ")
}

func scanCounts(row *sqlx.Row, chs []channels.Descriptor) (RecipientCounts, error) {
	c := RecipientCounts{PerChannel: make([]int64, len(chs))}
	dest := []any{&c.Total, &c.AdHoc}
	for i := range c.PerChannel {
		dest = append(dest, &c.PerChannel[i])
	}
	if err := row.Scan(dest...); err != nil {
		return RecipientCounts{}, fmt.Errorf("count recipients: %w", err)
	}
	return c, nil
}

// CountRecipients counts who an alert would reach on the channels chs,
// without writing anything: the resolution ResolveRecipients writes,
// counted as CountAlertRecipients counts an alert's.
func CountRecipients(ctx context.Context, q sqlx.QueryerContext, tenant string, s RecipientSpec, chs []channels.Descriptor) (RecipientCounts, error) {
	a := &Args{}
	a.Add(tenant)
	cols := countColumns(a, chs)
	return scanCounts(q.QueryRowxContext(ctx, `SELECT `+cols+` FROM (`+s.resolution(a)+`) r`, a.Values...), chs)
}

// CountAlertRecipients counts the resolved recipients of an alert on the
// channels chs.
func CountAlertRecipients(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64, chs []channels.Descriptor) (RecipientCounts, error) {
	a := &Args{}
	a.Add(tenant)
	alert := a.Add(alertID)
	cols := countColumns(a, chs)
	return scanCounts(q.QueryRowxContext(ctx, `SELECT `+cols+` FROM alert_recipients r WHERE r.tenant_id = $1 AND r.alert_id = `+alert, a.Values...), chs)
}

// RecipientRow is a recipient as storage reads it.
type RecipientRow = alert.Recipient

// SampleRecipient returns the first recipient the spec resolves to (the
// given contact when sampleID is not zero and among them), or nil.
func SampleRecipient(ctx context.Context, q sqlx.QueryerContext, tenant string, s RecipientSpec, sampleID int64) (*RecipientRow, error) {
	s.NeedEmail, s.NeedTextPhone, s.NeedVoicePhone = true, true, true
	a := &Args{}
	a.Add(tenant)
	cond := "true"
	all := s.resolution(a)
	if sampleID > 0 {
		cond = "r.person_id = " + a.Add(sampleID)
	}
	var r RecipientRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT r.* FROM (`+all+`) r WHERE `+cond+` ORDER BY r.seq LIMIT 1`, a.Values...)
	if err != nil {
		if NotFound(err) == ErrNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("sample recipient: %w", err)
	}
	return &r, nil
}

// MissingIDs returns the ids among ids that the tenant has no row of in
// table (people, groups or distribution_lists).
func MissingIDs(ctx context.Context, q sqlx.QueryerContext, tenant, table string, ids []int64) ([]int64, error) {
	switch table {
	case "people", "groups", "distribution_lists", "alerts":
	default:
		return nil, fmt.Errorf("no such table %q", table)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var missing []int64
	err := sqlx.SelectContext(ctx, q, &missing, `SELECT i FROM unnest($2::bigint[]) AS i
		WHERE NOT EXISTS (SELECT 1 FROM `+table+` t WHERE t.tenant_id = $1 AND t.id = i) ORDER BY i`,
		tenant, pq.Int64Array(ids))
	if err != nil {
		return nil, fmt.Errorf("check %s ids: %w", table, err)
	}
	return missing, nil
}

// MissingDirectoryUsers returns the ids among ids that are not users of the
// tenant's directory, in order.
func MissingDirectoryUsers(ctx context.Context, q sqlx.QueryerContext, tenant, directoryID string, ids []int64) ([]int64, error) {
	return SelectAll[int64](ctx, q, "check directory user ids", `SELECT i FROM unnest($3::bigint[]) AS i
		WHERE NOT EXISTS (SELECT 1 FROM people p WHERE p.tenant_id = $1 AND p.directory_id = $2 AND p.id = i) ORDER BY i`,
		tenant, directoryID, pq.Int64Array(ids))
}
