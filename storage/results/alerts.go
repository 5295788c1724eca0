// Package results reads and records what the API shows and takes in about
// alerts: the tenant's alert list and defaults, an alert's recipients,
// deliveries, status history and poll counts, recipients' responses,
// providers' receipts and call statuses, and the numbering of CAP updates.
// Every query is scoped to a tenant.
package results

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Store is the repository of alerts' results.
type Store struct {
	DB *storage.DB
}

// New returns the Store over db.
func New(db *storage.DB) *Store { return &Store{DB: db} }

// AlertSorting is how the alert list may be ordered.
var AlertSorting = storage.Sorting{
	Columns: map[string]string{
		"id": "id", "createdat": "created_at", "sentat": "sent_at NULLS LAST", "subject": "lower(subject)", "status": "status",
		"priority": "priority", "type": "alert_type", "from": "lower(sender_name)",
	},
	Default: "created_at DESC", TieBreak: "id DESC",
}

// AlertFilter selects alerts of a tenant. Restricted alerts of users other
// than Caller are always left out.
type AlertFilter struct {
	Tenant, Caller string
	IDs            []int64
	// StatusSets are sets of states; the alert's status must be in each.
	StatusSets   [][]string
	Types        []string
	Priorities   []string
	Subject      string // contains, case-insensitive
	From         string // sender name contains, case-insensitive
	Incident     string // contains, case-insensitive
	FacilityName string // one of the facilities, case-insensitive
	CreatedBy    string
	Hidden       bool
	// After and Before bound the creation time, or with BySentAt the
	// sending time (the creation time of an alert not sent yet).
	After, Before *time.Time
	BySentAt      bool
}

// where is a WHERE clause built from conditions with ? for their argument.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, v any) {
	w.args = append(w.args, v)
	w.conds = append(w.conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(w.args))))
}

func (w *where) String() string { return strings.Join(w.conds, " AND ") }

// LikeEscape escapes the LIKE wildcards of s.
func LikeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// FindAlerts returns a page of the alerts matching f, in order (an ORDER
// BY list built from AlertSorting), and how many match (as
// storage.CountRows counts them).
func (s *Store) FindAlerts(ctx context.Context, f AlertFilter, order string, limit, offset int) ([]storage.Alert, storage.Total, error) {
	w := &where{conds: []string{"tenant_id = $1", "(NOT restricted OR created_by = $2)"}, args: []any{f.Tenant, f.Caller}}
	if len(f.IDs) > 0 {
		w.add("id = ANY(?)", pq.Int64Array(f.IDs))
	}
	for _, set := range f.StatusSets {
		w.add("status = ANY(?)", pq.StringArray(set))
	}
	if len(f.Types) > 0 {
		w.add("alert_type = ANY(?)", pq.StringArray(f.Types))
	}
	if len(f.Priorities) > 0 {
		w.add("priority = ANY(?)", pq.StringArray(f.Priorities))
	}
	if f.Subject != "" {
		w.add(`subject ILIKE ?`, "%"+LikeEscape(f.Subject)+"%")
	}
	if f.From != "" {
		w.add(`sender_name ILIKE ?`, "%"+LikeEscape(f.From)+"%")
	}
	if f.Incident != "" {
		w.add(`incident_name ILIKE ?`, "%"+LikeEscape(f.Incident)+"%")
	}
	if f.FacilityName != "" {
		w.add(`EXISTS (SELECT 1 FROM unnest(facility_names) fn WHERE lower(fn) = lower(?))`, f.FacilityName)
	}
	if f.CreatedBy != "" {
		w.add("created_by = ?", f.CreatedBy)
	}
	w.add("hidden = ?", f.Hidden)
	dateColumn := "created_at"
	if f.BySentAt {
		dateColumn = "coalesce(sent_at, created_at)"
	}
	if f.After != nil {
		w.add(dateColumn+" >= ?", *f.After)
	}
	if f.Before != nil {
		w.add(dateColumn+" < ?", *f.Before)
	}
	return storage.Page[storage.Alert](ctx, s.DB, "alerts", storage.CountRows(`FROM alerts WHERE `+w.String()),
		`SELECT `+storage.AlertColumns+` FROM alerts WHERE `+w.String()+` ORDER BY `+order, w.args, limit, offset)
}

// Defaults returns the tenant's stored defaults for new alerts and when
// they were changed, or nil and nil when the tenant has none.
func (s *Store) Defaults(ctx context.Context, tenant string) (json.RawMessage, *time.Time, error) {
	var row struct {
		Defaults  []byte    `db:"defaults"`
		UpdatedAt time.Time `db:"updated_at"`
	}
	err := s.DB.GetContext(ctx, &row, `SELECT defaults, updated_at FROM alert_defaults WHERE tenant_id = $1`, tenant)
	if errors.Is(storage.NotFound(err), storage.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read alert defaults: %w", err)
	}
	return row.Defaults, &row.UpdatedAt, nil
}

// SaveDefaults stores the tenant's defaults for new alerts.
func (s *Store) SaveDefaults(ctx context.Context, tenant string, defaults json.RawMessage) error {
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO alert_defaults (tenant_id, defaults, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (tenant_id) DO UPDATE SET defaults = excluded.defaults, updated_at = now()`, tenant, []byte(defaults)); err != nil {
		return fmt.Errorf("save alert defaults: %w", err)
	}
	return nil
}

// StatusChange is one entry of an alert's status history.
type StatusChange struct {
	Status string    `db:"status"`
	At     time.Time `db:"at"`
	Detail string    `db:"detail"`
}

// StatusHistory returns an alert's status changes in order.
func (s *Store) StatusHistory(ctx context.Context, tenant string, alertID int64) ([]StatusChange, error) {
	return storage.SelectAll[StatusChange](ctx, s.DB, "read status history", `SELECT status, at, detail FROM alert_status_changes WHERE alert_id = $1 AND tenant_id = $2 ORDER BY id`,
		alertID, tenant)
}

// CapChannels returns the channels on which the alert has a sent CAP message.
func (s *Store) CapChannels(ctx context.Context, tenant string, alertID int64) ([]string, error) {
	return storage.SelectAll[string](ctx, s.DB, "read cap channels", `SELECT DISTINCT channel FROM cap_messages
		WHERE tenant_id = $1 AND alert_id = $2 AND status = 'Sent' ORDER BY channel`, tenant, alertID)
}

// NumberCapUpdate records a CAP update (msgType Update or Cancel) of the
// alert and returns its number (1 for the first). Two updates numbered at
// once conflict: one gets storage.ErrConflict.
func (s *Store) NumberCapUpdate(ctx context.Context, tenant string, alertID int64, msgType string) (int, error) {
	var seq int
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		return tx.GetContext(ctx, &seq, `INSERT INTO alert_cap_updates (tenant_id, alert_id, seq, msg_type)
			SELECT $1, $2, coalesce(max(seq), 0) + 1, $3 FROM alert_cap_updates WHERE tenant_id = $1 AND alert_id = $2
			RETURNING seq`, tenant, alertID, msgType)
	})
	if storage.IsUniqueViolation(err, "") {
		return 0, storage.ErrConflict
	}
	if err != nil {
		return 0, fmt.Errorf("number cap update: %w", err)
	}
	return seq, nil
}
