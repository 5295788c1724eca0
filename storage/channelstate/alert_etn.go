package channelstate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
	"github.com/tocsin/tocsin/storage"
)

// AlertETNTarget is a phone number an ETN alert calls.
type AlertETNTarget struct {
	Seq   int64  `db:"seq"`
	Phone string `db:"phone"`
	Name  string `db:"name"`
}

// ETNCallResult is the outcome of requesting the call of target Seq.
type ETNCallResult struct {
	Seq int64
	// Status is storage.DeliverySent, DeliveryFailed or DeliveryRetrying.
	Status            string
	ProviderMessageID string
	Error             string
}

// AlertETNTargets are the phone numbers of ETN alerts (alert_etn_targets).
type AlertETNTargets struct {
	DB *storage.DB
	// CountTimeout bounds Count's statement (ETNCountTimeout when zero).
	CountTimeout time.Duration
}

// StoreOnce stores the targets of the tenant's alert inside the places of
// its areas (from the named address-point lists and contacts), numbered
// from 1 in phone order place by place, unless the alert has targets
// already.
func (s *AlertETNTargets) StoreOnce(ctx context.Context, tenant string, alertID int64, areas []alert.Place, lists []string) error {
	return s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		var stored bool
		if err := tx.GetContext(ctx, &stored, `SELECT EXISTS (SELECT 1 FROM alert_etn_targets WHERE tenant_id = $1 AND alert_id = $2)`, tenant, alertID); err != nil {
			return fmt.Errorf("look for etn targets: %w", err)
		}
		if stored {
			return nil
		}
		for _, p := range areas {
			a := &storage.Args{Values: []any{tenant, pq.Array(lists), alertID}}
			q := targetsSQL(a, p)
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO alert_etn_targets (tenant_id, alert_id, seq, phone, source, person_id, name, latitude, longitude)
				SELECT $1, $3, coalesce((SELECT max(seq) FROM alert_etn_targets WHERE alert_id = $3), 0) + row_number() OVER (ORDER BY phone),
					phone, source, person_id, name, latitude, longitude
				FROM (`+q+`) t WHERE NOT EXISTS (SELECT 1 FROM alert_etn_targets x WHERE x.alert_id = $3 AND x.phone = t.phone)`,
				a.Values...); err != nil {
				return fmt.Errorf("store etn targets: %w", err)
			}
		}
		return nil
	})
}

// ETNCountTimeout bounds the statement that counts the numbers an ETN
// alert inside areas would call (AlertETNTargets.Count, for the preview and
// an alert not yet delivered): large areas over a large address-point list
// must not hold a connection for long while a client waits.
const ETNCountTimeout = 5 * time.Second

// CountTimeoutError is AlertETNTargets.Count's error when its statement
// ran longer than After.
type CountTimeoutError struct {
	After time.Duration
}

func (e *CountTimeoutError) Error() string {
	return fmt.Sprintf("count etn targets: took longer than %s", e.After)
}

// Count counts the distinct numbers an ETN alert inside areas would call
// now (what StoreOnce would store): for the preview, before an alert
// exists. The count runs in a read-only transaction whose statement
// timeout is CountTimeout (ETNCountTimeout when zero); past it the error
// is a *CountTimeoutError.
func (s *AlertETNTargets) Count(ctx context.Context, tenant string, areas []alert.Place, lists []string) (int64, error) {
	if len(areas) == 0 {
		return 0, nil
	}
	a := &storage.Args{Values: []any{tenant, pq.Array(lists)}}
	parts := make([]string, len(areas))
	for i, p := range areas {
		// Each part has its own ORDER BY (DISTINCT ON), so each is
		// parenthesised.
		parts[i] = "(" + targetsSQL(a, p) + ")"
	}
	timeout := s.CountTimeout
	if timeout <= 0 {
		timeout = ETNCountTimeout
	}
	var n int64
	err := s.DB.InSnapshot(ctx, func(tx *sqlx.Tx) error {
		// SET takes no parameters; at least 1 ms, since 0 turns the bound off.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SET LOCAL statement_timeout = %d`, max(timeout.Milliseconds(), 1))); err != nil {
			return fmt.Errorf("bound the etn count: %w", err)
		}
		return tx.GetContext(ctx, &n, `SELECT count(DISTINCT phone) FROM (`+strings.Join(parts, " UNION ALL ")+`) t`, a.Values...)
	})
	var pqe *pq.Error
	if errors.As(err, &pqe) && pqe.Code == queryCanceled && ctx.Err() == nil {
		return 0, &CountTimeoutError{After: timeout}
	}
	if err != nil {
		return 0, fmt.Errorf("count etn targets: %w", err)
	}
	return n, nil
}

// queryCanceled is PostgreSQL's error code of a statement cancelled by its
// statement timeout (or at a client's request, when its context ended).
const queryCanceled = "57014"

// Unfinished returns up to limit of the alert's targets after seq after
// that are still to be called (Pending or Retrying), in seq order.
func (s *AlertETNTargets) Unfinished(ctx context.Context, tenant string, alertID, after int64, limit int) ([]AlertETNTarget, error) {
	var out []AlertETNTarget
	if err := s.DB.SelectContext(ctx, &out, `SELECT seq, phone, name FROM alert_etn_targets
		WHERE tenant_id = $1 AND alert_id = $2 AND seq > $3 AND status IN ('Pending', 'Retrying') ORDER BY seq LIMIT $4`,
		tenant, alertID, after, limit); err != nil {
		return nil, fmt.Errorf("read etn targets: %w", err)
	}
	return out, nil
}

// RecordCalls records the outcome of requesting the targets' calls; a
// target already Delivered or Failed keeps its status. Then it applies the
// final call statuses that arrived before the request was recorded, found
// by their call keys, which begin with keyHead (the alert's workflow id,
// alert.WorkflowID).
func (s *AlertETNTargets) RecordCalls(ctx context.Context, tenant string, alertID int64, keyHead string, res []ETNCallResult) error {
	seqs := make(pq.Int64Array, len(res))
	statuses := make(pq.StringArray, len(res))
	pids := make(pq.StringArray, len(res))
	errs := make(pq.StringArray, len(res))
	for i, r := range res {
		seqs[i], statuses[i], pids[i], errs[i] = r.Seq, r.Status, r.ProviderMessageID, r.Error
	}
	if _, err := s.DB.ExecContext(ctx, `
		UPDATE alert_etn_targets t SET status = CASE WHEN t.status IN ('Delivered', 'Failed') THEN t.status ELSE u.status END,
			provider_message_id = u.pid, error = u.err, attempts = t.attempts + 1,
			sent_at = CASE WHEN u.status IN ('Sent', 'Delivered') THEN coalesce(t.sent_at, now()) ELSE t.sent_at END,
			delivered_at = CASE WHEN u.status = 'Delivered' THEN coalesce(t.delivered_at, now()) ELSE t.delivered_at END, updated_at = now()
		FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) AS u(seq, status, pid, err)
		WHERE t.tenant_id = $1 AND t.alert_id = $2 AND t.seq = u.seq`,
		tenant, alertID, seqs, statuses, pids, errs); err != nil {
		return fmt.Errorf("record etn calls: %w", err)
	}
	// Callbacks that overtook the recording.
	if _, err := s.DB.ExecContext(ctx, `
		UPDATE alert_etn_targets t SET
			status = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN 'Delivered' ELSE 'Failed' END,
			delivered_at = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN c.updated_at END, updated_at = now()
		FROM voice_calls c
		WHERE c.tenant_id = $1 AND c.alert_id = $2 AND c.channel = 'etn' AND t.alert_id = $2 AND t.seq = ANY($3)
			AND c.call_key = $4 || ':etn:1:' || t.seq AND t.status = 'Sent'
			AND (c.status IN ('Answered', 'Confirmed') OR (c.status IN ('Busy', 'NoAnswer', 'Failed') AND c.next_attempt_at IS NULL))`,
		tenant, alertID, seqs, keyHead); err != nil {
		return fmt.Errorf("apply early etn call statuses: %w", err)
	}
	return nil
}
