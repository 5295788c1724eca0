package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
)

// RecipientSpec is the query that resolves an alert's recipients: who
// (alert.RecipientSpec) and which of their addresses to look up.
type RecipientSpec struct {
	alert.RecipientSpec

	// Which addresses to look up.
	NeedEmail, NeedTextPhone, NeedVoicePhone, NeedCustomFields bool
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
		parts = append(parts, `SELECT person_id, false FROM alert_recipients WHERE tenant_id = $1 AND alert_id = `+a.add(s.RelatedAlertID)+` AND person_id IS NOT NULL`)
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

// selection is the query of resolved people with their addresses. $1 is the tenant.
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
	if s.NeedCustomFields {
		custom = "p.custom_fields"
	}
	src := s.sources(a)
	where := s.filter(a)
	return `WITH src (person_id, mandatory) AS (` + src + `),
		sel AS (SELECT person_id, bool_or(mandatory) AS mandatory FROM src WHERE person_id IS NOT NULL GROUP BY person_id)
		SELECT p.id AS person_id, coalesce(p.external_id, '') AS external_id, p.first_name, p.last_name,
			` + email + ` AS email, ` + text + ` AS phone, ` + voice + ` AS voice_phone, ` + custom + ` AS custom_fields,
			sel.mandatory AS is_mandatory
		FROM sel JOIN people p ON p.id = sel.person_id AND p.tenant_id = $1
		WHERE ` + where
}

// adHocInsert adds an alert's ad-hoc recipients ($4..$7: first names, last
// names, lower-case emails, E.164 phones; $3 the recipients so far). One
// person is one recipient: an entry whose email is one of a resolved
// person's addresses, or whose phone one of their numbers, is that
// recipient (made mandatory, as ad-hoc recipients are), and an entry that
// shares its email or phone with an earlier entry is that entry. The
// lookups go through the (tenant_id, address), (tenant_id, number) and
// (alert_id, person_id) indexes, once per ad-hoc entry.
const adHocInsert = `
	WITH t AS (
		SELECT * FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS t(first, last, email, phone, ord)),
	known AS (
		SELECT t.ord, min(r.seq) AS seq FROM t
		JOIN LATERAL (
			SELECT e.person_id FROM person_emails e WHERE t.email <> '' AND e.tenant_id = $1 AND e.address = t.email
			UNION SELECT ph.person_id FROM person_phones ph WHERE t.phone <> '' AND ph.tenant_id = $1 AND ph.number = t.phone
		) m ON true
		JOIN alert_recipients r ON r.alert_id = $2 AND r.person_id = m.person_id AND r.tenant_id = $1
		GROUP BY t.ord),
	marked AS (
		UPDATE alert_recipients r SET is_mandatory = true FROM known k
		WHERE r.tenant_id = $1 AND r.alert_id = $2 AND r.seq = k.seq AND NOT r.is_mandatory),
	fresh AS (
		SELECT t.* FROM t
		WHERE NOT EXISTS (SELECT 1 FROM known k WHERE k.ord = t.ord)
			AND NOT EXISTS (SELECT 1 FROM t u WHERE u.ord < t.ord
				AND ((t.email <> '' AND u.email = t.email) OR (t.phone <> '' AND u.phone = t.phone))))
	INSERT INTO alert_recipients (tenant_id, alert_id, seq, first_name, last_name, email, phone, voice_phone, is_mandatory)
	SELECT $1, $2, $3 + row_number() OVER (ORDER BY f.ord), f.first, f.last, nullif(f.email, ''), nullif(f.phone, ''), nullif(f.phone, ''), true
	FROM fresh f`

// ResolveRecipients writes the recipients of an alert into alert_recipients
// with one INSERT ... SELECT (plus one for ad-hoc recipients), numbering them
// 1..n. It runs inside tx; a second call for the same alert does nothing and
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
	sel := s.selection(a)
	res, err := tx.ExecContext(ctx, `INSERT INTO alert_recipients (tenant_id, alert_id, seq, person_id, external_id,
			first_name, last_name, email, phone, voice_phone, custom_fields, is_mandatory)
		SELECT $1, `+alert+`, row_number() OVER (ORDER BY r.person_id), r.person_id, r.external_id, r.first_name, r.last_name,
			r.email, r.phone, r.voice_phone, r.custom_fields, r.is_mandatory
		FROM (`+sel+`) r`, a.args...)
	if err != nil {
		return 0, fmt.Errorf("resolve recipients: %w", err)
	}
	count, _ = res.RowsAffected()
	if len(s.AdHoc) > 0 {
		var first, last, email, phone []string
		for _, r := range s.AdHoc {
			first, last, email, phone = append(first, r.FirstName), append(last, r.LastName), append(email, r.Email), append(phone, r.Phone)
		}
		res, err := tx.ExecContext(ctx, adHocInsert,
			tenant, alertID, count, pq.StringArray(first), pq.StringArray(last), pq.StringArray(email), pq.StringArray(phone))
		if err != nil {
			return 0, fmt.Errorf("add ad-hoc recipients: %w", err)
		}
		n, _ := res.RowsAffected()
		count += n
	}
	if _, err := tx.ExecContext(ctx, `UPDATE alerts SET resolved_at = now(), recipient_count = $3 WHERE tenant_id = $1 AND id = $2`,
		tenant, alertID, count); err != nil {
		return 0, fmt.Errorf("record recipient count: %w", err)
	}
	return count, nil
}

// RecipientCounts are the numbers a preview shows.
type RecipientCounts struct {
	Total, WithEmail, WithTextPhone, WithVoicePhone int64
}

// CountRecipients counts who an alert would reach, without writing anything.
// Ad-hoc recipients are counted as given.
func CountRecipients(ctx context.Context, q sqlx.QueryerContext, tenant string, s RecipientSpec) (RecipientCounts, error) {
	s.NeedEmail, s.NeedTextPhone, s.NeedVoicePhone = true, true, true
	a := &argList{}
	a.add(tenant)
	var c RecipientCounts
	err := q.QueryRowxContext(ctx, `SELECT count(*), count(email), count(phone), count(voice_phone) FROM (`+s.selection(a)+`) r`, a.args...).
		Scan(&c.Total, &c.WithEmail, &c.WithTextPhone, &c.WithVoicePhone)
	if err != nil {
		return c, fmt.Errorf("count recipients: %w", err)
	}
	for _, r := range s.AdHoc {
		c.Total++
		if r.Email != "" {
			c.WithEmail++
		}
		if r.Phone != "" {
			c.WithTextPhone++
			c.WithVoicePhone++
		}
	}
	return c, nil
}

// RecipientRow is a recipient as storage reads it.
type RecipientRow = alert.Recipient

// SampleRecipient returns one person the spec resolves to (the given
// contact when sampleID is not zero and among them), or nil.
func SampleRecipient(ctx context.Context, q sqlx.QueryerContext, tenant string, s RecipientSpec, sampleID int64) (*RecipientRow, error) {
	s.NeedEmail, s.NeedTextPhone, s.NeedVoicePhone, s.NeedCustomFields = true, true, true, true
	a := &argList{}
	a.add(tenant)
	cond := "true"
	sel := s.selection(a)
	if sampleID > 0 {
		cond = "r.person_id = " + a.add(sampleID)
	}
	var r RecipientRow
	err := sqlx.GetContext(ctx, q, &r, `SELECT 0 AS seq, r.* FROM (`+sel+`) r WHERE `+cond+` ORDER BY r.person_id LIMIT 1`, a.args...)
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
