package results

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/storage"
)

// Recipient is a recipient of an alert as the result pages read it.
type Recipient struct {
	storage.RecipientRow
	ConfirmedAt *time.Time `db:"confirmed_at"`
	RespondedAt *time.Time `db:"responded_at"`
}

const recipientColumns = `r.seq, r.person_id, r.external_id, r.first_name, r.last_name, r.email, r.phone, r.voice_phone,
	r.custom_fields, r.is_mandatory, r.confirmed_at, r.responded_at`

// RecipientSorting is how an alert's recipients may be ordered.
var RecipientSorting = storage.Sorting{
	Columns: map[string]string{
		"lastname": "lower(r.last_name)", "firstname": "lower(r.first_name)",
		"responsetime": "coalesce(r.responded_at, r.confirmed_at) NULLS LAST", "recipientid": "r.seq",
	},
	Default: "r.seq", TieBreak: "r.seq",
}

// RecipientFilter selects recipients of one alert.
type RecipientFilter struct {
	Tenant  string
	AlertID int64
	// Seqs, when not empty, are the only recipients (their numbers within the alert).
	Seqs []int64
	// Mandatory, when not nil, keeps recipients selected directly (true)
	// or only those reached through groups, lists and areas (false).
	Mandatory *bool
	// PollOptionID, when not zero, keeps recipients who chose that option.
	PollOptionID int
	Name         string // full name contains, case-insensitive
	Email        string // email address contains, case-insensitive
}

// Recipients returns a page of the recipients matching f, in order (an
// ORDER BY list built from RecipientSorting), and how many match: without
// a filter exactly, from the count the alert keeps of its recipients
// (written with them by storage.ResolveRecipients); with one as
// storage.CountRows counts.
func (s *Store) Recipients(ctx context.Context, f RecipientFilter, order string, limit, offset int) ([]Recipient, storage.Total, error) {
	w := &where{conds: []string{"r.alert_id = $1", "r.tenant_id = $2"}, args: []any{f.AlertID, f.Tenant}}
	count := storage.CountExact(`SELECT coalesce((SELECT recipient_count FROM alerts WHERE id = $1 AND tenant_id = $2), 0)`)
	if len(f.Seqs) > 0 {
		w.add("r.seq = ANY(?)", pq.Int64Array(f.Seqs))
	}
	if f.Mandatory != nil {
		w.add("r.is_mandatory = ?", *f.Mandatory)
	}
	if f.PollOptionID > 0 {
		w.add("EXISTS (SELECT 1 FROM alert_responses x WHERE x.alert_id = r.alert_id AND x.tenant_id = r.tenant_id AND x.seq = r.seq AND x.option_id = ?)", f.PollOptionID)
	}
	if f.Name != "" {
		w.add("(r.first_name || ' ' || r.last_name) ILIKE ?", "%"+LikeEscape(f.Name)+"%")
	}
	if f.Email != "" {
		w.add("r.email ILIKE ?", "%"+LikeEscape(f.Email)+"%")
	}
	if len(w.conds) > 2 {
		count = storage.CountRows(`FROM alert_recipients r WHERE ` + w.String())
	}
	return storage.Page[Recipient](ctx, s.DB, "recipients", count,
		`SELECT `+recipientColumns+` FROM alert_recipients r WHERE `+w.String()+` ORDER BY `+order, w.args, limit, offset)
}

// Recipient returns recipient seq of an alert, storage.ErrNotFound when the
// alert has none.
func (s *Store) Recipient(ctx context.Context, tenant string, alertID, seq int64) (Recipient, error) {
	return storage.GetOne[Recipient](ctx, s.DB, "read recipient", `SELECT `+recipientColumns+` FROM alert_recipients r WHERE r.alert_id = $1 AND r.tenant_id = $2 AND r.seq = $3`,
		alertID, tenant, seq)
}

// FirstRecipient returns an alert's first recipient, storage.ErrNotFound
// when it has none.
func (s *Store) FirstRecipient(ctx context.Context, tenant string, alertID int64) (Recipient, error) {
	return storage.GetOne[Recipient](ctx, s.DB, "read first recipient", `SELECT `+recipientColumns+` FROM alert_recipients r WHERE r.alert_id = $1 AND r.tenant_id = $2
		ORDER BY r.seq LIMIT 1`, alertID, tenant)
}

// RecipientsBySeq returns the recipients of an alert with these numbers.
func (s *Store) RecipientsBySeq(ctx context.Context, tenant string, alertID int64, seqs []int64) ([]Recipient, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	return storage.SelectAll[Recipient](ctx, s.DB, "read recipients", `SELECT `+recipientColumns+` FROM alert_recipients r WHERE r.alert_id = $1 AND r.tenant_id = $2 AND r.seq = ANY($3)`,
		alertID, tenant, pq.Int64Array(seqs))
}

// RecipientCounts counts an alert's resolved recipients, the ad-hoc ones
// and those with an address on each of the channels chs
// (storage.CountAlertRecipients).
func (s *Store) RecipientCounts(ctx context.Context, tenant string, alertID int64, chs []channels.Descriptor) (storage.RecipientCounts, error) {
	return storage.CountAlertRecipients(ctx, s.DB, tenant, alertID, chs)
}

// ResponseCounts counts an alert's recipients who confirmed and who answered.
func (s *Store) ResponseCounts(ctx context.Context, tenant string, alertID int64) (confirmed, responded int64, err error) {
	if err := s.DB.QueryRowxContext(ctx, `SELECT count(*) FILTER (WHERE confirmed_at IS NOT NULL), count(*) FILTER (WHERE responded_at IS NOT NULL)
		FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2`, alertID, tenant).Scan(&confirmed, &responded); err != nil {
		return 0, 0, fmt.Errorf("count responses: %w", err)
	}
	return confirmed, responded, nil
}

// OptionCount is how many recipients chose an option of a poll question.
type OptionCount struct {
	Question int   `db:"question_id"`
	Option   int   `db:"option_id"`
	Count    int64 `db:"n"`
}

// OptionCounts counts the answers of an alert's poll per question and option.
func (s *Store) OptionCounts(ctx context.Context, tenant string, alertID int64) ([]OptionCount, error) {
	return storage.SelectAll[OptionCount](ctx, s.DB, "count answers", `SELECT question_id, option_id, count(*) AS n FROM alert_responses
		WHERE alert_id = $1 AND tenant_id = $2 GROUP BY question_id, option_id`, alertID, tenant)
}

// Answer is a recipient's answer to a poll question.
type Answer struct {
	Seq      int64     `db:"seq"`
	Question int       `db:"question_id"`
	Option   int       `db:"option_id"`
	Via      string    `db:"via"`
	At       time.Time `db:"responded_at"`
}

// Answers returns the poll answers of these recipients of an alert, by
// recipient and question.
func (s *Store) Answers(ctx context.Context, tenant string, alertID int64, seqs []int64) ([]Answer, error) {
	return storage.SelectAll[Answer](ctx, s.DB, "read answers", `SELECT seq, question_id, option_id, via, responded_at FROM alert_responses
		WHERE alert_id = $1 AND tenant_id = $2 AND seq = ANY($3) AND question_id > 0 ORDER BY seq, question_id`,
		alertID, tenant, pq.Int64Array(seqs))
}

// SeqStatus is the status of a recipient's delivery on one channel in its
// latest cycle.
type SeqStatus struct {
	Seq    int64  `db:"seq"`
	Status string `db:"status"`
}

// LatestStatuses returns, for these recipients of an alert, the status of
// each channel's delivery in its latest cycle.
func (s *Store) LatestStatuses(ctx context.Context, tenant string, alertID int64, seqs []int64) ([]SeqStatus, error) {
	return storage.SelectAll[SeqStatus](ctx, s.DB, "read delivery statuses", `SELECT DISTINCT ON (seq, channel) seq, status FROM alert_deliveries
		WHERE alert_id = $1 AND tenant_id = $2 AND seq = ANY($3) ORDER BY seq, channel, cycle DESC`,
		alertID, tenant, pq.Int64Array(seqs))
}

// Delivery is a delivery of an alert, to one recipient or destination on
// one channel in one cycle.
type Delivery struct {
	Channel   string `db:"channel"`
	Cycle     int    `db:"cycle"`
	Seq       int64  `db:"seq"`
	Address   string `db:"address"`
	Permanent bool   `db:"permanent"`
	// Key is the idempotency key, read only for shared deliveries.
	Key string `db:"key"`
	Outcome
}

// Outcome is where a delivery to one address stands: its status, the
// attempts made, the provider's message id or the last error, and when it
// was sent, delivered and last changed.
type Outcome struct {
	Status            string     `db:"status"`
	Attempts          int        `db:"attempts"`
	ProviderMessageID string     `db:"provider_message_id"`
	Error             string     `db:"error"`
	SentAt            *time.Time `db:"sent_at"`
	DeliveredAt       *time.Time `db:"delivered_at"`
	UpdatedAt         time.Time  `db:"updated_at"`
}

const deliveryColumns = `channel, cycle, seq, address, status, attempts, provider_message_id, error, permanent,
	'' AS key, sent_at, delivered_at, updated_at`

// RecipientDeliveries returns the deliveries to one recipient of an alert,
// by channel and cycle.
func (s *Store) RecipientDeliveries(ctx context.Context, tenant string, alertID, seq int64) ([]Delivery, error) {
	return storage.SelectAll[Delivery](ctx, s.DB, "read deliveries", `SELECT `+deliveryColumns+` FROM alert_deliveries
		WHERE alert_id = $1 AND tenant_id = $2 AND seq = $3 ORDER BY channel, cycle`, alertID, tenant, seq)
}

// ChannelDeliveries returns a page of an alert's deliveries on one channel,
// by recipient and cycle, and how many there are in all: exactly, from the
// counts of the channel's delivery batches (storage.RecountBatch keeps
// them with the rows), however many there are.
func (s *Store) ChannelDeliveries(ctx context.Context, tenant string, alertID int64, channel string, limit, offset int) ([]Delivery, storage.Total, error) {
	const where = `alert_id = $1 AND tenant_id = $2 AND channel = $3`
	return storage.Page[Delivery](ctx, s.DB, "deliveries", storage.CountExact(`SELECT coalesce(sum(total), 0)::bigint FROM alert_batches WHERE `+where),
		`SELECT `+deliveryColumns+` FROM alert_deliveries WHERE `+where+` ORDER BY seq, cycle`, []any{alertID, tenant, channel}, limit, offset)
}

// SharedDeliveries returns the deliveries shared by a whole alert that
// reach a recipient: those of the broadcast-style channels (one per
// destination) and, with etnArea, the ETN calls to the person's numbers
// among the targets inside the alert's areas, whose keys begin with keyHead
// (the alert's workflow id, alert.WorkflowID). They come by channel and
// address.
func (s *Store) SharedDeliveries(ctx context.Context, tenant string, alertID int64, keyHead string, broadcast []string, etnArea bool, personID *int64) ([]Delivery, error) {
	return storage.SelectAll[Delivery](ctx, s.DB, "read shared deliveries", `
		SELECT channel, cycle, 0::bigint AS seq, coalesce(nullif(destination_name, ''), destination) AS address, status, attempts,
			provider_message_id, error, permanent, idempotency_key AS key, sent_at, NULL::timestamptz AS delivered_at, updated_at
		FROM alert_broadcasts WHERE tenant_id = $1 AND alert_id = $2 AND channel = ANY($3)
		UNION ALL
		SELECT 'etn', 1, 0, phone, status, attempts, provider_message_id, error, false,
			$6 || ':etn:1:' || seq, sent_at, delivered_at, updated_at
		FROM alert_etn_targets WHERE $4 AND tenant_id = $1 AND alert_id = $2 AND person_id = $5
		ORDER BY 1, 4`, tenant, alertID, pq.StringArray(broadcast), etnArea, personID, keyHead)
}

// EtnTarget is a number an ETN alert with areas called. A contact's number
// has the contact's first and last name (as they are now; the name stored
// with the target when the contact is gone), an address point's its name
// as First.
type EtnTarget struct {
	Seq      int64  `db:"seq"`
	Phone    string `db:"phone"`
	PersonID *int64 `db:"person_id"`
	First    string `db:"first_name"`
	Last     string `db:"last_name"`
	Outcome
}

// EtnTargets returns a page of an alert's ETN targets in order.
func (s *Store) EtnTargets(ctx context.Context, tenant string, alertID int64, limit, offset int) ([]EtnTarget, error) {
	return storage.SelectAll[EtnTarget](ctx, s.DB, "read etn targets", etnTargetsQuery, tenant, alertID, limit, offset)
}

const etnTargetsQuery = `SELECT t.seq, t.phone, t.person_id,
		coalesce(p.first_name, t.name) AS first_name, coalesce(p.last_name, '') AS last_name,
		t.status, t.attempts, t.provider_message_id, t.error, t.sent_at, t.delivered_at, t.updated_at
	FROM alert_etn_targets t LEFT JOIN people p ON p.id = t.person_id AND p.tenant_id = t.tenant_id
	WHERE t.tenant_id = $1 AND t.alert_id = $2 ORDER BY t.seq LIMIT $3 OFFSET $4`

// ExplainEtnPage runs the statements of an area ETN alert's results page
// under EXPLAIN (ANALYZE, FORMAT JSON) and returns their plans by what
// they read: "counts" and "own" (storage.AlertTotalsStatements) and "page"
// (EtnTargets at limit and offset), so tests can check how many targets
// each reads.
func (s *Store) ExplainEtnPage(ctx context.Context, tenant string, alertID int64, limit, offset int) (map[string]string, error) {
	out := map[string]string{}
	for what, q := range map[string]struct {
		sql  string
		args []any
	}{
		"counts": {storage.AlertTotalsStatements()["counts"], []any{tenant, alertID}},
		"own":    {storage.AlertTotalsStatements()["own"], []any{tenant, alertID}},
		"page":   {etnTargetsQuery, []any{tenant, alertID, limit, offset}},
	} {
		plan, err := storage.Explain(ctx, s.DB, []string{"ANALYZE", "FORMAT JSON"}, q.sql, q.args...)
		if err != nil {
			return nil, err
		}
		out[what] = plan
	}
	return out, nil
}
