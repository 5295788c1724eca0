package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
)

// Alert states (README, "AlertStatus", gives their meaning).
const (
	AlertScheduled  = "Scheduled"
	AlertQueued     = "Queued"
	AlertProcessing = "Processing"
	AlertSent       = "Sent"
	AlertFailed     = "Failed"
	// AlertCancelled is a scheduled alert cancelled before its send time.
	AlertCancelled = "Cancelled"
)

// Delivery states (alert.Delivery*); the last four are final.
const (
	DeliveryRetrying  = alert.DeliveryRetrying
	DeliverySent      = alert.DeliverySent
	DeliveryDelivered = alert.DeliveryDelivered
	DeliveryFailed    = alert.DeliveryFailed
	DeliverySkipped   = alert.DeliverySkipped
)

// Alert is a row of the alerts table.
type Alert struct {
	ID        int64          `db:"id"`
	TenantID  string         `db:"tenant_id"`
	CreatedBy string         `db:"created_by"`
	ClientKey sql.NullString `db:"client_key"`
	// RequestDigest identifies the request that created an alert with a
	// client key (see alerting's requestDigest); nil without a key, and
	// for keyed alerts stored before digests were kept.
	RequestDigest  []byte          `db:"request_digest"`
	Type           string          `db:"alert_type"`
	Priority       string          `db:"priority"`
	Subject        string          `db:"subject"`
	SenderName     string          `db:"sender_name"`
	IncidentName   string          `db:"incident_name"`
	FacilityNames  pq.StringArray  `db:"facility_names"`
	Hidden         bool            `db:"hidden"`
	Restricted     bool            `db:"restricted"`
	Channels       pq.StringArray  `db:"channels"`
	Settings       json.RawMessage `db:"settings"`
	Attachments    json.RawMessage `db:"attachments"`
	Status         string          `db:"status"`
	Error          string          `db:"error"`
	WorkflowID     string          `db:"workflow_id"`
	BatchSize      int             `db:"batch_size"`
	RecipientCount int64           `db:"recipient_count"`
	CurrentCycle   int             `db:"current_cycle"`
	ScheduledFor   *time.Time      `db:"scheduled_for"`
	CreatedAt      time.Time       `db:"created_at"`
	QueuedAt       *time.Time      `db:"queued_at"`
	ProcessingAt   *time.Time      `db:"processing_at"`
	SentAt         *time.Time      `db:"sent_at"`
	FailedAt       *time.Time      `db:"failed_at"`
	CompletedAt    *time.Time      `db:"completed_at"`
	ResolvedAt     *time.Time      `db:"resolved_at"`
}

// AttachmentRef is an attachment of an alert, stored in the object store.
type AttachmentRef struct {
	// Name is the file's name in the email (without its folder).
	Name string `json:"name" db:"name"`
	// FullName is the stored file's full name (folder/name) as the alert
	// gives it in content.attachments; empty for a file uploaded with the
	// alert and in alerts made before it was kept.
	FullName    string `json:"fullName,omitempty" db:"-"`
	ContentType string `json:"contentType" db:"content_type"`
	Size        int64  `json:"size" db:"size"`
	Key         string `json:"key" db:"key"`
}

const alertColumns = `id, tenant_id, created_by, client_key, request_digest, alert_type, priority, subject, sender_name,
	incident_name, facility_names, hidden, restricted, channels, settings, attachments, status, error,
	workflow_id, batch_size, recipient_count, current_cycle, scheduled_for, created_at, queued_at,
	processing_at, sent_at, failed_at, completed_at, resolved_at`

// AlertColumns is the column list that scans into Alert.
const AlertColumns = alertColumns

// NextAlertID reserves the id of a new alert, so its workflow id is known
// before the row is written.
func NextAlertID(ctx context.Context, q sqlx.QueryerContext) (int64, error) {
	var id int64
	if err := sqlx.GetContext(ctx, q, &id, `SELECT nextval(pg_get_serial_sequence('alerts', 'id'))`); err != nil {
		return 0, fmt.Errorf("reserve alert id: %w", err)
	}
	return id, nil
}

// InsertAlert writes a new alert with its first status change. A client key
// already used by the tenant is ErrConflict.
func InsertAlert(ctx context.Context, tx *sqlx.Tx, a *Alert) error {
	if a.FacilityNames == nil {
		a.FacilityNames = pq.StringArray{}
	}
	if a.Channels == nil {
		a.Channels = pq.StringArray{}
	}
	if len(a.Attachments) == 0 {
		a.Attachments = []byte("[]")
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO alerts (id, tenant_id, created_by, client_key, alert_type, priority, subject, sender_name,
			incident_name, facility_names, hidden, restricted, channels, settings, attachments, status,
			workflow_id, scheduled_for, created_at, queued_at, request_digest)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
			CASE WHEN $16 = 'Queued' THEN $19::timestamptz END, $20)`,
		a.ID, a.TenantID, a.CreatedBy, a.ClientKey, a.Type, a.Priority, a.Subject, a.SenderName,
		a.IncidentName, a.FacilityNames, a.Hidden, a.Restricted, a.Channels, a.Settings, a.Attachments, a.Status,
		a.WorkflowID, a.ScheduledFor, a.CreatedAt, a.RequestDigest)
	if IsUniqueViolation(err, "alerts_tenant_client_key") {
		return ErrConflict
	}
	if err != nil {
		return fmt.Errorf("insert alert: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO alert_status_changes (tenant_id, alert_id, status, at) VALUES ($1, $2, $3, $4)`,
		a.TenantID, a.ID, a.Status, a.CreatedAt); err != nil {
		return fmt.Errorf("insert alert status: %w", err)
	}
	return nil
}

// GetAlert reads one alert of the tenant.
func GetAlert(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64) (*Alert, error) {
	var a Alert
	err := sqlx.GetContext(ctx, q, &a, `SELECT `+alertColumns+` FROM alerts WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return nil, NotFound(err)
	}
	return &a, nil
}

// ErrAlertIDReused is the error of a read or change of an alert named by
// its id and tag (alert.WorkflowID) when the id is another alert's: the
// alert named is gone (the database was restored from a backup taken
// before it was stored) and its id was handed out again.
var ErrAlertIDReused = errors.New("the alert id is another alert's now")

// GetTaggedAlert reads the tenant's alert id if it is the alert of tag
// (its stored workflow id is alert.WorkflowID of tag; tag "" names an
// alert stored before tags came). When it is not: ErrAlertIDReused if the
// tenant's alert of that id is another one, else ErrNotFound.
func GetTaggedAlert(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64, tag string) (*Alert, error) {
	var a Alert
	err := sqlx.GetContext(ctx, q, &a, `SELECT `+alertColumns+` FROM alerts WHERE tenant_id = $1 AND id = $2 AND workflow_id = $3`,
		tenant, id, alert.WorkflowID(tenant, id, tag))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, missingAlert(ctx, q, tenant, id, tag)
	}
	if err != nil {
		return nil, fmt.Errorf("read alert: %w", err)
	}
	return &a, nil
}

// CheckAlert tells whether the tenant's alert id is the alert of tag, as
// GetTaggedAlert does, without reading it: nil when it is.
func CheckAlert(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64, tag string) error {
	var one int
	err := sqlx.GetContext(ctx, q, &one, `SELECT 1 FROM alerts WHERE tenant_id = $1 AND id = $2 AND workflow_id = $3`,
		tenant, id, alert.WorkflowID(tenant, id, tag))
	if errors.Is(err, sql.ErrNoRows) {
		return missingAlert(ctx, q, tenant, id, tag)
	}
	if err != nil {
		return fmt.Errorf("check alert: %w", err)
	}
	return nil
}

// missingAlert says why a statement that names the tenant's alert id by
// its tag found no row: ErrAlertIDReused, naming the workflow id the alert
// of that id has, when it is another alert; else ErrNotFound (also when
// the alert of tag has been stored since, which a retry then finds). It
// runs only after such a miss.
func missingAlert(ctx context.Context, q sqlx.QueryerContext, tenant string, id int64, tag string) error {
	want := alert.WorkflowID(tenant, id, tag)
	var got string
	err := sqlx.GetContext(ctx, q, &got, `SELECT workflow_id FROM alerts WHERE tenant_id = $1 AND id = $2`, tenant, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("read alert workflow: %w", err)
	case got == want:
		return ErrNotFound
	}
	return fmt.Errorf("alert %d is the alert of workflow %s, not of %s: %w", id, got, want, ErrAlertIDReused)
}

// GetAlertByClientKey reads the tenant's alert created with a client key.
func GetAlertByClientKey(ctx context.Context, q sqlx.QueryerContext, tenant, key string) (*Alert, error) {
	var a Alert
	err := sqlx.GetContext(ctx, q, &a, `SELECT `+alertColumns+` FROM alerts WHERE tenant_id = $1 AND client_key = $2`, tenant, key)
	if err != nil {
		return nil, NotFound(err)
	}
	return &a, nil
}

// statusColumn is the timestamp column each status sets.
var statusColumn = map[string]string{
	AlertQueued:     "queued_at",
	AlertProcessing: "processing_at",
	AlertSent:       "sent_at",
	AlertFailed:     "failed_at",
}

// TransitionAlert moves an alert from one of the from states to the to
// state, records the change and returns whether it happened (false when the
// alert was not in a from state, e.g. on a retried activity).
func TransitionAlert(ctx context.Context, tx *sqlx.Tx, tenant string, id int64, from []string, to, detail string) (bool, error) {
	col := statusColumn[to]
	set := "status = $3"
	if col != "" {
		set += ", " + col + " = clock_timestamp()"
	}
	if to == AlertFailed {
		set += ", error = $5"
	}
	args := []any{tenant, id, to, pq.StringArray(from)}
	if to == AlertFailed {
		args = append(args, detail)
	}
	res, err := tx.ExecContext(ctx, `UPDATE alerts SET `+set+` WHERE tenant_id = $1 AND id = $2 AND status = ANY($4)`, args...)
	if err != nil {
		return false, fmt.Errorf("update alert status: %w", err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO alert_status_changes (tenant_id, alert_id, status, detail, at) VALUES ($1, $2, $3, $4, clock_timestamp())`,
		tenant, id, to, detail); err != nil {
		return false, fmt.Errorf("insert alert status: %w", err)
	}
	return true, nil
}

// OutboxEvent is an event written to the outbox with the change it reports.
type OutboxEvent struct {
	Type    string
	Payload any
}

// AcceptAlert stores a new alert, its events and the request to start its
// workflow in one transaction: an alert is accepted with everything that
// carries it out, or not at all. A client key already used is ErrConflict.
// release, when not nil, runs first in the transaction: it releases the
// claim on the attachment uploaded with the alert (files.ReleaseIn), so
// that the commit hands the object to the alert, and its error fails the
// transaction.
func AcceptAlert(ctx context.Context, db *DB, a *Alert, events []OutboxEvent, start StartRequest, release func(context.Context, *sqlx.Tx) error) error {
	return db.InTx(ctx, func(tx *sqlx.Tx) error {
		if release != nil {
			if err := release(ctx, tx); err != nil {
				return err
			}
		}
		if err := InsertAlert(ctx, tx, a); err != nil {
			return err
		}
		for _, ev := range events {
			if _, err := EmitEvent(ctx, tx, a.TenantID, ev.Type, ev.Payload); err != nil {
				return err
			}
		}
		return EnqueueStart(ctx, tx, start)
	})
}
