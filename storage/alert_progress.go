package storage

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
)

// SetBatchSize records size as the alert's batch size unless it has one,
// and returns the batch size the alert keeps.
func SetBatchSize(ctx context.Context, tx *sqlx.Tx, tenant string, alertID int64, size int) (int, error) {
	if _, err := tx.ExecContext(ctx, `UPDATE alerts SET batch_size = $3 WHERE tenant_id = $1 AND id = $2 AND batch_size = 0`,
		tenant, alertID, size); err != nil {
		return 0, fmt.Errorf("record batch size: %w", err)
	}
	var bs int
	if err := tx.GetContext(ctx, &bs, `SELECT batch_size FROM alerts WHERE tenant_id = $1 AND id = $2`, tenant, alertID); err != nil {
		return 0, fmt.Errorf("read batch size: %w", err)
	}
	return bs, nil
}

// StartCycle records that the alert of tag delivers cycle (the current
// cycle only grows). An alert id that is another alert's now is
// ErrAlertIDReused, and left as it is; a missing one ErrNotFound.
func StartCycle(ctx context.Context, q sqlx.ExtContext, tenant string, alertID int64, tag string, cycle int) error {
	res, err := q.ExecContext(ctx, `UPDATE alerts SET current_cycle = greatest(current_cycle, $3)
		WHERE tenant_id = $1 AND id = $2 AND workflow_id = $4`,
		tenant, alertID, cycle, alert.WorkflowID(tenant, alertID, tag))
	if err != nil {
		return fmt.Errorf("start cycle: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return missingAlert(ctx, q, tenant, alertID, tag)
	}
	return nil
}

// MarkAlertCompleted records when the alert completed, the first time only,
// and reports whether this was the first time.
func MarkAlertCompleted(ctx context.Context, q sqlx.ExecerContext, tenant string, alertID int64) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE alerts SET completed_at = now() WHERE tenant_id = $1 AND id = $2 AND completed_at IS NULL`,
		tenant, alertID)
	if err != nil {
		return false, fmt.Errorf("complete alert: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// AlertStatus returns the alert's status.
func AlertStatus(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64) (string, error) {
	var status string
	if err := sqlx.GetContext(ctx, q, &status, `SELECT status FROM alerts WHERE tenant_id = $1 AND id = $2`, tenant, alertID); err != nil {
		return "", fmt.Errorf("read status: %w", NotFound(err))
	}
	return status, nil
}

// CountConfirmed counts the alert's recipients who confirmed.
func CountConfirmed(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64) (int64, error) {
	var n int64
	if err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM alert_recipients WHERE alert_id = $1 AND tenant_id = $2 AND confirmed_at IS NOT NULL`,
		alertID, tenant); err != nil {
		return 0, fmt.Errorf("count confirmations: %w", err)
	}
	return n, nil
}

// BroadcastRecord is the outcome of a broadcast to one destination of an
// alert's channel in a cycle.
type BroadcastRecord struct {
	Tenant      string
	AlertID     int64
	Channel     string
	Cycle       int
	Destination string
	Name        string
	// Status is a Delivery* status.
	Status            string
	ProviderMessageID string
	Error             string
	Permanent         bool
	Key               string
}

// RecordBroadcast stores r; a destination already Sent or Delivered keeps
// its result, any other result is replaced and its attempts counted.
func RecordBroadcast(ctx context.Context, q sqlx.ExecerContext, r BroadcastRecord) error {
	if _, err := q.ExecContext(ctx, `
		INSERT INTO alert_broadcasts (tenant_id, alert_id, channel, cycle, destination, destination_name, status,
			provider_message_id, error, permanent, idempotency_key, sent_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $7 IN ('Sent', 'Delivered') THEN now() END)
		ON CONFLICT (alert_id, channel, cycle, destination) DO UPDATE SET
			status = excluded.status, provider_message_id = excluded.provider_message_id, error = excluded.error,
			permanent = excluded.permanent, attempts = alert_broadcasts.attempts + 1,
			sent_at = COALESCE(alert_broadcasts.sent_at, excluded.sent_at), updated_at = now()
		WHERE alert_broadcasts.status NOT IN ('Sent', 'Delivered')`,
		r.Tenant, r.AlertID, r.Channel, r.Cycle, r.Destination, r.Name, r.Status, r.ProviderMessageID, r.Error, r.Permanent, r.Key); err != nil {
		return fmt.Errorf("record broadcast: %w", err)
	}
	return nil
}

// FinishedBroadcasts returns the destinations of the alert's channel whose
// broadcast in cycle is final (Sent, Delivered or Failed).
func FinishedBroadcasts(ctx context.Context, q sqlx.QueryerContext, tenant string, alertID int64, channel string, cycle int) ([]string, error) {
	return SelectAll[string](ctx, q, "read broadcasts", `SELECT destination FROM alert_broadcasts
		WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = $4 AND status IN ('Sent', 'Delivered', 'Failed')`,
		tenant, alertID, channel, cycle)
}

// ApplyEarlyCallStatuses applies to the batch's Sent deliveries the final
// statuses of their calls (keys) that arrived before the deliveries were
// written: answered calls make them Delivered, calls that ended unanswered
// with no redial left Failed. It returns how many deliveries changed.
func ApplyEarlyCallStatuses(ctx context.Context, q sqlx.ExecerContext, k BatchKey, keys []string) (int64, error) {
	res, err := q.ExecContext(ctx, `
		UPDATE alert_deliveries d SET
			status = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN 'Delivered' ELSE 'Failed' END,
			delivered_at = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN c.updated_at END,
			error = CASE WHEN c.status IN ('Answered', 'Confirmed') THEN d.error
				ELSE coalesce(nullif(c.error, ''), 'the call ended ' || c.status) END,
			updated_at = now()
		FROM voice_calls c
		WHERE c.tenant_id = $1 AND c.call_key = ANY($2)
			AND d.alert_id = $3 AND d.channel = $4 AND d.cycle = $5 AND d.seq = split_part(c.call_key, ':', 4)::bigint
			AND d.status = 'Sent'
			AND (c.status IN ('Answered', 'Confirmed') OR (c.status IN ('Busy', 'NoAnswer', 'Failed') AND c.next_attempt_at IS NULL))`,
		k.Tenant, pq.StringArray(keys), k.AlertID, k.Channel, k.Cycle)
	if err != nil {
		return 0, fmt.Errorf("apply early call statuses: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// PersonAddress is an address of a person on a channel.
type PersonAddress struct {
	PersonID int64  `db:"person_id"`
	Address  string `db:"address"`
}

// DeviceTokens returns the tokens of the people's devices of app, by person
// and in the order they were added.
func DeviceTokens(ctx context.Context, q sqlx.QueryerContext, tenant, app string, people []int64) ([]PersonAddress, error) {
	return SelectAll[PersonAddress](ctx, q, "read devices", `SELECT person_id, token AS address FROM person_devices
		WHERE tenant_id = $1 AND app = $2 AND person_id = ANY($3) ORDER BY person_id, id`, tenant, app, pq.Int64Array(people))
}

// FaxNumbers returns the people's fax numbers, by person and in the order
// they were added.
func FaxNumbers(ctx context.Context, q sqlx.QueryerContext, tenant string, people []int64) ([]PersonAddress, error) {
	return SelectAll[PersonAddress](ctx, q, "read fax numbers", `SELECT person_id, number AS address FROM person_phones
		WHERE tenant_id = $1 AND phone_type = 'Fax' AND person_id = ANY($2) ORDER BY person_id, id`, tenant, pq.Int64Array(people))
}

// FileAsset is a stored form of a file of the library.
type FileAsset struct {
	FullName string `db:"full_name"`
	FileName string `db:"file_name"`
	FileID   int64  `db:"file_id"`
	// FileKind is the file's kind (image or audio), Kind the form's
	// (original, resized, voice or eas).
	FileKind    string `db:"file_kind"`
	Kind        string `db:"kind"`
	ContentType string `db:"content_type"`
	Key         string `db:"object_key"`
}

// FileAssetsNamed returns the stored forms of the tenant's files whose full
// name or file name is one of names.
func FileAssetsNamed(ctx context.Context, q sqlx.QueryerContext, tenant string, names []string) ([]FileAsset, error) {
	return SelectAll[FileAsset](ctx, q, "resolve stored files", `SELECT f.full_name, f.file_name, f.id AS file_id, f.kind AS file_kind,
			a.kind, a.content_type, a.object_key
		FROM files f JOIN file_assets a ON a.file_id = f.id AND a.tenant_id = f.tenant_id
		WHERE f.tenant_id = $1 AND (f.full_name = ANY($2) OR f.file_name = ANY($2))`, tenant, pq.StringArray(names))
}
