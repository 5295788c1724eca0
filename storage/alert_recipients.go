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
	for _, ch := range chs {
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

type argList struct{ args []any }

func (a *argList) add(v any) string {
	a.args = append(a.args, v)
	return "$" + strconv.Itoa(len(a.args))
}

func float(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// sources is the UNION ALL of (person_id, mandatory) rows of every source.
// $1 is the tenant.
func (s RecipientSpec) sources(a *argList) string {
	var parts []string
	if len(s.ContactIDs) > 0 {
		parts = append(parts, `SELECT id AS person_id, true AS mandatory FROM people WHERE tenant_id = $1 AND id = ANY(`+a.add(pq.Int64Array(s.ContactIDs))+`)`)
	}
	if len(s.GroupIDs) > 0 {
		parts = append(parts, `SELECT person_id, false FROM group_memberships WHERE tenant_id = $1 AND group_id = ANY(`+a.add(pq.Int64Array(s.GroupIDs))+`)`)
	}
	if len(s.SubtreeGroupIDs) > 0 {
		parts = append(parts, `SELECT m.person_id, false FROM groups g
			JOIN groups sub ON sub.tenant_id = $1 AND sub.path LIKE g.path || '%'
			JOIN group_memberships m ON m.group_id = sub.id
			WHERE g.tenant_id = $1 AND g.id = ANY(`+a.add(pq.Int64Array(s.SubtreeGroupIDs))+`)`)
	}
	if len(s.ListIDs) > 0 {
		parts = append(parts, `SELECT person_id, false FROM distribution_list_members WHERE tenant_id = $1 AND list_id = ANY(`+a.add(pq.Int64Array(s.ListIDs))+`)`)
	}
	if s.DirectoryID != "" {
		q := `SELECT id, ` + strconv.FormatBool(!s.AllDirectoryUsers) + ` FROM people WHERE tenant_id = $1 AND directory_id = ` + a.add(s.DirectoryID)
		if !s.AllDirectoryUsers {
			q += ` AND id = ANY(` + a.add(pq.Int64Array(s.DirectoryUserIDs)) + `)`
		}
		parts = append(parts, q)
	}
	for _, p := range s.Polygons {
		q := `SELECT person_id, false FROM person_locations WHERE tenant_id = $1
			AND latitude BETWEEN ` + float(p.MinLat) + ` AND ` + float(p.MaxLat) + `
			AND longitude BETWEEN ` + float(p.MinLng) + ` AND ` + float(p.MaxLng) + `
			AND ` + a.add(p.Outer) + `::polygon @> point(longitude, latitude)`
		for _, h := range p.Holes {
			q += ` AND NOT (` + a.add(h) + `::polygon @> point(longitude, latitude))`
		}
		parts = append(parts, q)
	}
	for _, c := range s.Circles {
		lat, lng := a.add(c.Lat), a.add(c.Lng)
		parts = append(parts, `SELECT person_id, false FROM person_locations WHERE tenant_id = $1
			AND latitude BETWEEN `+float(c.MinLat)+` AND `+float(c.MaxLat)+`
			AND longitude BETWEEN `+float(c.MinLng)+` AND `+float(c.MaxLng)+`
			AND 2 * 6371008.8 * asin(sqrt(power(sin(radians(latitude - `+lat+`::float8) / 2), 2)
				+ cos(radians(`+lat+`::float8)) * cos(radians(latitude)) * power(sin(radians(longitude - `+lng+`::float8) / 2), 2)))
				<= `+a.add(c.RadiusMeters)+`::float8`)
	}
	if s.RelatedAlertID > 0 {
		// The earlier alert's people, selected directly or not as they were there.
		parts = append(parts, `SELECT person_id, is_mandatory FROM alert_recipients WHERE tenant_id = $1 AND alert_id = `+a.add(s.RelatedAlertID)+` AND person_id IS NOT NULL`)
	}
	if len(parts) == 0 {
		return `SELECT NULL::bigint AS person_id, false AS mandatory WHERE false`
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

func (s RecipientSpec) filter(a *argList) string {
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
			col = "coalesce(p.custom_fields ->> " + a.add(strings.TrimPrefix(c.Field, "custom.")) + ", '')"
		default:
			continue
		}
		switch c.Op {
		case "Equals":
			conds = append(conds, col+" = "+a.add(first(c.Values)))
		case "NotEquals":
			conds = append(conds, col+" <> "+a.add(first(c.Values)))
		case "In":
			conds = append(conds, col+" = ANY("+a.add(pq.StringArray(c.Values))+")")
		case "NotIn":
			conds = append(conds, "NOT ("+col+" = ANY("+a.add(pq.StringArray(c.Values))+"))")
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
func (s RecipientSpec) selection(a *argList) string {
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
			a.add(pq.StringArray(s.CustomFields)))
	}
	src := s.sources(a)
	where := s.filter(a)
	return `WITH src (person_id, mandatory) AS (` + src + `),
		sel AS (SELECT person_id, bool_or(mandatory) AS mandatory FROM src WHERE person_id IS NOT NULL GROUP BY person_id)
		SELECT row_number() OVER (ORDER BY p.id) AS seq, p.id AS person_id, coalesce(p.external_id, '') AS external_id, p.first_name, p.last_name,
			` + email + ` AS email, ` + text + ` AS phone, ` + voice + ` AS voice_phone, ` + custom + ` AS custom_fields,
			sel.mandatory AS is_mandatory
		FROM sel JOIN people p ON p.id = sel.person_id AND p.tenant_id = $1
		WHERE ` + where
}

// resolution is the query of an alert's recipients, numbered 1..n (seq):
// the people the selection resolves to, by person id, then the ad-hoc
// entries (AdHoc, then the earlier alert's ad-hoc recipients) that are no
// one before them, in order. It is the one rule of who an alert reaches:
// ResolveRecipients writes its rows, CountRecipients counts them and
// SampleRecipient reads one. $1 is the tenant.
//
// One person is one recipient. An ad-hoc entry whose email is one of a
// resolved person's addresses, or whose phone one of their numbers, is
// that recipient (made mandatory, as ad-hoc recipients are), and an entry
// that shares its email or phone with an earlier entry is that entry. The
// lookups go through the (tenant_id, address) and (tenant_id, number)
// indexes, once per ad-hoc entry; the memberships (IN) are hashed, so the
// statement stays linear in the people and the entries.
func (s RecipientSpec) resolution(a *argList) string {
	people := s.selection(a)
	if len(s.AdHoc) == 0 && s.RelatedAlertID == 0 {
		return people
	}
	var first, last, email, phone []string
	for _, r := range s.AdHoc {
		first, last, email, phone = append(first, r.FirstName), append(last, r.LastName), append(email, r.Email), append(phone, r.Phone)
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
		SELECT t.ord, m.person_id FROM t
		JOIN LATERAL (
			SELECT e.person_id FROM person_emails e WHERE t.email <> '' AND e.tenant_id = $1 AND e.address = t.email
			UNION SELECT ph.person_id FROM person_phones ph WHERE t.phone <> '' AND ph.tenant_id = $1 AND ph.number = t.phone
		) m ON true),
	known AS (
		SELECT n.ord, n.person_id FROM named n WHERE n.person_id IN (SELECT r.person_id FROM r)),
	firsts AS (
		SELECT t.*, min(t.ord) OVER (PARTITION BY t.email) AS by_email, min(t.ord) OVER (PARTITION BY t.phone) AS by_phone FROM t),
	fresh AS (
		SELECT f.* FROM firsts f
		WHERE (f.email = '' OR f.by_email = f.ord) AND (f.phone = '' OR f.by_phone = f.ord)
			AND f.ord NOT IN (SELECT k.ord FROM known k))
	SELECT row_number() OVER (ORDER BY x.ad_hoc, x.n) AS seq, x.person_id, x.external_id, x.first_name, x.last_name,
		x.email, x.phone, x.voice_phone, x.custom_fields, x.is_mandatory
	FROM (
		SELECT false AS ad_hoc, r.seq AS n, r.person_id, r.external_id, r.first_name, r.last_name, r.email, r.phone, r.voice_phone,
			r.custom_fields, r.is_mandatory OR r.person_id IN (SELECT k.person_id FROM known k) AS is_mandatory
		FROM r
		UNION ALL
		SELECT true, f.ord, NULL, '', f.first, f.last, nullif(f.email, ''), nullif(f.phone, ''), nullif(f.phone, ''), NULL, true
		FROM fresh f) x`,
		people, a.add(pq.StringArray(first)), a.add(pq.StringArray(last)), a.add(pq.StringArray(email)), a.add(pq.StringArray(phone)),
		len(s.AdHoc), a.add(s.RelatedAlertID))
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
	a := &argList{}
	a.add(tenant)
	alert := a.add(alertID)
	res, err := tx.ExecContext(ctx, `INSERT INTO alert_recipients (tenant_id, alert_id, seq, person_id, external_id,
			first_name, last_name, email, phone, voice_phone, custom_fields, is_mandatory)
		SELECT $1, `+alert+`, r.seq, r.person_id, r.external_id, r.first_name, r.last_name,
			r.email, r.phone, r.voice_phone, r.custom_fields, r.is_mandatory
		FROM (`+s.resolution(a)+`) r`, a.args...)
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
// it (channels.Addresses): the row's own column, or the person's fax
// numbers or devices of the channel's app, as delivery reads them. A
// channel not addressed per recipient counts none. $1 is the tenant.
func countColumns(a *argList, chs []channels.Descriptor) string {
	cols := []string{"count(*)", "count(*) FILTER (WHERE r.person_id IS NULL)"}
	for _, d := range chs {
		switch d.Addresses() {
		case channels.RecipientEmail:
			cols = append(cols, "count(r.email)")
		case channels.RecipientPhone:
			cols = append(cols, "count(r.phone)")
		case channels.RecipientVoicePhone:
			cols = append(cols, "count(r.voice_phone)")
		case channels.FaxNumber:
			cols = append(cols, `count(*) FILTER (WHERE EXISTS (SELECT 1 FROM person_phones f
				WHERE f.tenant_id = $1 AND f.person_id = r.person_id AND f.phone_type = 'Fax'))`)
		case channels.DeviceTokens:
			cols = append(cols, `count(*) FILTER (WHERE EXISTS (SELECT 1 FROM person_devices d
				WHERE d.tenant_id = $1 AND d.person_id = r.person_id AND d.app = `+a.add(d.App)+`))`)
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
	a := &argList{}
	a.add(tenant)
	cols := countColumns(a, chs)
	return scanCounts(q.QueryRowxContext(ctx, `SELECT `+cols+` FROM (`+s.resolution(a)+`) r`, a.args...), chs)
}

// CountAlertRecipients counts the resolved recipients of an alert on the
// channels chs.
func CountAlertRecipients(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64, chs []channels.Descriptor) (RecipientCounts, error) {
	a := &argList{}
	a.add(tenant)
	alert := a.add(alertID)
	cols := countColumns(a, chs)
	return scanCounts(q.QueryRowxContext(ctx, `SELECT `+cols+` FROM alert_recipients r WHERE r.tenant_id = $1 AND r.alert_id = `+alert, a.args...), chs)
}

// RecipientRow is a recipient as storage reads it.
type RecipientRow = alert.Recipient

// SampleRecipient returns the first recipient the spec resolves to (the
// given contact when sampleID is not zero and among them), or nil.
func SampleRecipient(ctx context.Context, q sqlx.QueryerContext, tenant string, s RecipientSpec, sampleID int64) (*RecipientRow, error) {
	s.NeedEmail, s.NeedTextPhone, s.NeedVoicePhone = true, true, true
	a := &argList{}
	a.add(tenant)
	cond := "true"
	all := s.resolution(a)
	if sampleID > 0 {
		cond = "r.person_id = " + a.add(sampleID)
	}
	var r RecipientRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT r.* FROM (`+all+`) r WHERE `+cond+` ORDER BY r.seq LIMIT 1`, a.args...)
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
