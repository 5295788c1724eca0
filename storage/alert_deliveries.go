package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
)

// DeliveryRow is the outcome of one delivery of a batch.
type DeliveryRow struct {
	Seq               int64
	Address           string
	Status            string
	ProviderMessageID string
	Error             string
	Permanent         bool
}

// BatchKey names a delivery batch: recipients with seq in (Lo, Hi] of an
// alert, on one channel, in one cycle.
type BatchKey struct {
	Tenant  string
	AlertID int64
	// Tag is the alert's tag ("" for an alert stored before tags came):
	// BatchRecipients and SaveBatchProgress act only on the alert of this
	// tag, never on another alert given the same id after a restore.
	Tag     string
	Channel string
	Cycle   int
	Lo, Hi  int64
}

// BatchRecipients reads the recipients of a batch that still need a
// delivery on its channel and cycle: those without a final result. In
// cycles after the first, only recipients who have not confirmed are read.
// In sequential order, skipEarlier lists the channels before this one: a
// recipient with a Sent or Delivered result on one of them in this cycle is
// returned with Skip set. Each statement is a range scan of one primary key;
// the sets are combined here, so no plan can turn into a nested loop over
// the alert's whole delivery table. The first statement also reads the
// alert's row by its tag (k.Tag): when the alert id is another alert's now,
// the batch is ErrAlertIDReused and nothing is read (a missing alert is
// ErrNotFound).
func BatchRecipients(ctx context.Context, q sqlx.QueryerContext, k BatchKey, skipEarlier []string) ([]BatchRecipient, error) {
	// One row with a NULL seq when the alert has no final result in the
	// batch, none when the alert is not the one of the tag.
	var final []sql.NullInt64
	if err := sqlx.SelectContext(ctx, q, &final, `SELECT d.seq FROM alerts a
		LEFT JOIN alert_deliveries d ON d.alert_id = a.id AND d.tenant_id = a.tenant_id
			AND d.channel = $3 AND d.cycle = $4 AND d.seq > $5 AND d.seq <= $6
			AND d.status IN ('Sent', 'Delivered', 'Failed', 'Skipped')
		WHERE a.tenant_id = $1 AND a.id = $2 AND a.workflow_id = $7`,
		k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi, alert.WorkflowID(k.Tenant, k.AlertID, k.Tag)); err != nil {
		return nil, fmt.Errorf("read batch results: %w", err)
	}
	if len(final) == 0 {
		return nil, missingAlert(ctx, q, k.Tenant, k.AlertID, k.Tag)
	}
	done := make([]int64, 0, len(final))
	for _, s := range final {
		if s.Valid {
			done = append(done, s.Int64)
		}
	}
	var reached []int64
	if len(skipEarlier) > 0 {
		if err := sqlx.SelectContext(ctx, q, &reached, `SELECT DISTINCT seq FROM alert_deliveries
			WHERE alert_id = $1 AND channel = ANY($2) AND cycle = $3 AND seq > $4 AND seq <= $5
				AND status IN ('Sent', 'Delivered') AND tenant_id = $6`, k.AlertID, pq.StringArray(skipEarlier), k.Cycle, k.Lo, k.Hi, k.Tenant); err != nil {
			return nil, fmt.Errorf("read earlier channels: %w", err)
		}
	}
	cond := ""
	if k.Cycle > 1 {
		cond = " AND confirmed_at IS NULL"
	}
	var all []BatchRecipient
	if err := sqlx.SelectContext(ctx, q, &all, `
		SELECT seq, person_id, external_id, first_name, last_name, email, phone, voice_phone, custom_fields, is_mandatory,
			email_reached_as, phone_reached_as, voice_phone_reached_as
		FROM alert_recipients
		WHERE alert_id = $1 AND tenant_id = $2 AND seq > $3 AND seq <= $4`+cond+`
		ORDER BY seq`, k.AlertID, k.Tenant, k.Lo, k.Hi); err != nil {
		return nil, fmt.Errorf("read batch recipients: %w", err)
	}
	skipDone := make(map[int64]bool, len(done))
	for _, s := range done {
		skipDone[s] = true
	}
	isReached := make(map[int64]bool, len(reached))
	for _, s := range reached {
		isReached[s] = true
	}
	out := all[:0]
	for _, r := range all {
		if skipDone[r.Seq] {
			continue
		}
		r.Skip = isReached[r.Seq]
		out = append(out, r)
	}
	return out, nil
}

// InBatchTx runs fn in a transaction that plans with index scans only. The
// batch statements all select one alert's key range, which an index serves
// best; right after a large alert's rows arrive the planner's statistics
// still describe a small table and would choose sequential scans.
func InBatchTx(ctx context.Context, db *DB, fn func(tx *sqlx.Tx) error) error {
	return db.InTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return fmt.Errorf("plan with indexes: %w", err)
		}
		return fn(tx)
	})
}

// BatchRecipient is a recipient read for delivery.
type BatchRecipient struct {
	RecipientRow
	Skip bool `db:"-"`
}

// RecordDeliveries writes the outcomes of a batch with one statement and
// then rewrites the batch's counts. A delivery that already has a final
// status keeps it, so a retried batch never duplicates or downgrades a row.
func RecordDeliveries(ctx context.Context, tx *sqlx.Tx, k BatchKey, rows []DeliveryRow) error {
	if len(rows) > 0 {
		seqs := make(pq.Int64Array, len(rows))
		addrs := make(pq.StringArray, len(rows))
		statuses := make(pq.StringArray, len(rows))
		pids := make(pq.StringArray, len(rows))
		errs := make(pq.StringArray, len(rows))
		perms := make(pq.BoolArray, len(rows))
		for i, r := range rows {
			seqs[i], addrs[i], statuses[i], pids[i], errs[i], perms[i] = r.Seq, r.Address, r.Status, r.ProviderMessageID, r.Error, r.Permanent
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO alert_deliveries AS d (tenant_id, alert_id, channel, cycle, seq, address, status,
				provider_message_id, error, permanent, sent_at, updated_at)
			SELECT $1, $2, $3, $4, u.seq, u.address, u.status, u.pid, u.err, u.perm,
				CASE WHEN u.status = 'Sent' THEN now() END, now()
			FROM unnest($5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bool[])
				AS u(seq, address, status, pid, err, perm)
			ON CONFLICT (alert_id, channel, cycle, seq) DO UPDATE SET
				address = excluded.address, status = excluded.status, attempts = d.attempts + 1,
				provider_message_id = excluded.provider_message_id, error = excluded.error,
				permanent = excluded.permanent, sent_at = coalesce(d.sent_at, excluded.sent_at), updated_at = now()
			WHERE d.status NOT IN ('Sent', 'Delivered', 'Failed', 'Skipped')`,
			k.Tenant, k.AlertID, k.Channel, k.Cycle, seqs, addrs, statuses, pids, errs, perms)
		if err != nil {
			return fmt.Errorf("record deliveries: %w", err)
		}
	}
	return RecountBatch(ctx, tx, k)
}

// LockBatch takes a transaction-scoped advisory lock on one delivery batch,
// so that writing a batch's results and applying a provider's status
// callback for one of its recipients never interleave: a callback either
// sees the batch's rows or commits before the batch reads it back.
func LockBatch(ctx context.Context, tx sqlx.ExecerContext, k BatchKey) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
		fmt.Sprintf("batch:%s:%d:%s:%d:%d", k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo))
	if err != nil {
		return fmt.Errorf("lock batch: %w", err)
	}
	return nil
}

// RecountBatch rewrites the counts of a batch from its delivery rows.
func RecountBatch(ctx context.Context, tx sqlx.ExecerContext, k BatchKey) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO alert_batches (tenant_id, alert_id, channel, cycle, lo, hi, total, sent, delivered, failed, skipped, retrying, updated_at)
		SELECT $1, $2, $3, $4, $5, $6, count(*),
			count(*) FILTER (WHERE status = 'Sent'), count(*) FILTER (WHERE status = 'Delivered'),
			count(*) FILTER (WHERE status = 'Failed'), count(*) FILTER (WHERE status = 'Skipped'),
			count(*) FILTER (WHERE status = 'Retrying'), now()
		FROM alert_deliveries WHERE alert_id = $2 AND channel = $3 AND cycle = $4 AND seq > $5 AND seq <= $6
		ON CONFLICT (alert_id, channel, cycle, lo) DO UPDATE SET total = excluded.total, sent = excluded.sent,
			delivered = excluded.delivered, failed = excluded.failed, skipped = excluded.skipped,
			retrying = excluded.retrying, updated_at = now()`,
		k.Tenant, k.AlertID, k.Channel, k.Cycle, k.Lo, k.Hi)
	if err != nil {
		return fmt.Errorf("recount batch: %w", err)
	}
	return nil
}

// ChannelCounts are the delivery counts of one channel (over every cycle).
type ChannelCounts struct {
	Channel string `db:"channel"`
	alert.Totals
	// FirstCycleRows are the rows of cycle 1; the rest of the first cycle's
	// recipients are pending.
	FirstCycleRows int64 `db:"first_cycle_rows"`
}

// AlertTotals are the delivery totals of each channel of the alert, in its
// channel order: the one rule by which the alert's status, its results and
// its events count. A channel with deliveries per recipient counts its
// batches, with the recipients of the first cycle that have no row yet
// pending (none once the alert failed); a channel with rows of its own
// counts them: the broadcast-style channels (a row per destination;
// nothing before they post) and ETN with areas (a number called, from the
// counts the alert keeps of its targets, once it stored them).
func AlertTotals(ctx context.Context, q sqlx.QueryerContext, al *Alert) ([]alert.Totals, error) {
	batches, err := AlertChannelCounts(ctx, q, al.TenantID, al.ID)
	if err != nil {
		return nil, err
	}
	type ownCounts struct {
		Channel string `db:"channel"`
		alert.Totals
	}
	own, err := SelectAll[ownCounts](ctx, q, "count own deliveries", ownCountsQuery, al.TenantID, al.ID)
	if err != nil {
		return nil, err
	}
	recipients := al.RecipientCount
	if al.ResolvedAt == nil {
		recipients = 0
	}
	by := map[string]ChannelCounts{}
	for _, c := range batches {
		by[c.Channel] = c
	}
	out := make([]alert.Totals, len(al.Channels))
	for i, ch := range al.Channels {
		if !alert.IsBroadcast(ch) { // a broadcast has nothing before it posts
			out[i] = by[ch].Totals.WithPending(recipients, by[ch].FirstCycleRows, al.Status == AlertFailed)
		}
	}
	for _, c := range own {
		if i := slices.Index(al.Channels, c.Channel); i >= 0 {
			out[i] = c.Totals
		}
	}
	return out, nil
}

// EtnTargetTotals counts the ETN targets of an alert by status, as the
// alert keeps them (alert_etn_counts, kept with the targets by a trigger):
// one row read, however many numbers the alert calls.
func EtnTargetTotals(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64) (alert.Totals, error) {
	t, err := GetOne[alert.Totals](ctx, q, "count etn targets", etnCountsQuery, tenant, alertID)
	if errors.Is(err, ErrNotFound) {
		return alert.Totals{}, nil // no targets stored
	}
	return t, err
}

// The statements that count an alert's ETN targets and the deliveries of
// its channels with rows of their own ($1 the tenant, $2 the alert).
const (
	etnCounts      = `total, pending, retrying, sent, delivered, failed FROM alert_etn_counts WHERE tenant_id = $1 AND alert_id = $2`
	etnCountsQuery = `SELECT ` + etnCounts
	ownCountsQuery = `SELECT channel, count(*) AS total,
			count(*) FILTER (WHERE status = 'Pending') AS pending, count(*) FILTER (WHERE status = 'Retrying') AS retrying,
			count(*) FILTER (WHERE status = 'Sent') AS sent, count(*) FILTER (WHERE status = 'Delivered') AS delivered,
			count(*) FILTER (WHERE status = 'Failed') AS failed
		FROM alert_broadcasts WHERE tenant_id = $1 AND alert_id = $2 GROUP BY channel
		UNION ALL SELECT 'etn', ` + etnCounts + ` AND total > 0`
)

// AlertTotalsStatements are the statements of AlertTotals and
// EtnTargetTotals that read what an area ETN alert stored, by what they
// count ("own": the channels with rows of their own, "counts": the ETN
// targets), for tests to EXPLAIN; each takes the tenant and the alert.
func AlertTotalsStatements() map[string]string {
	return map[string]string{"own": ownCountsQuery, "counts": etnCountsQuery}
}

// AlertChannelCounts sums the batch counts of an alert per channel.
func AlertChannelCounts(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64) ([]ChannelCounts, error) {
	var out []ChannelCounts
	err := sqlx.SelectContext(ctx, q, &out, `
		SELECT channel, sum(total)::bigint AS total, sum(sent)::bigint AS sent, sum(delivered)::bigint AS delivered,
			sum(failed)::bigint AS failed, sum(skipped)::bigint AS skipped, sum(retrying)::bigint AS retrying,
			coalesce(sum(total) FILTER (WHERE cycle = 1), 0)::bigint AS first_cycle_rows
		FROM alert_batches WHERE tenant_id = $1 AND alert_id = $2 GROUP BY channel ORDER BY channel`, tenant, alertID)
	if err != nil {
		return nil, fmt.Errorf("count deliveries: %w", err)
	}
	return out, nil
}
