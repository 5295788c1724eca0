package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/alert"
)

// StartsChannel is the PostgreSQL notification channel on which
// EnqueueStart announces a new start request when its transaction commits.
const StartsChannel = "tocsin_workflow_starts"

// Temporal task queue priority keys of the workflows tocsin starts (1 is
// served first; Temporal's default, and that of anything started without
// one, is 3). Activities and child workflows inherit their workflow's.
const (
	// PriorityUrgent is for Emergency alerts and verification codes: a
	// person is waiting for them.
	PriorityUrgent = 1
	// PriorityInteractive is for work an open request waits for (file processing).
	PriorityInteractive = 2
	// PriorityNormal is for NonEmergency alerts.
	PriorityNormal = 3
)

// IsUrgent tells whether a start request of priority p belongs to the urgent
// lane (PriorityUrgent, and the unset 0 with it).
func IsUrgent(p int) bool { return p <= PriorityUrgent }

// AlertPriority is the task queue priority of the work of an alert of
// priority p (Alert.Priority): its SendAlert workflow and the CAP updates
// and cancellations of its messages. An Emergency alert's is urgent.
func AlertPriority(p string) int {
	if p == string(alert.PriorityEmergency) {
		return PriorityUrgent
	}
	return PriorityNormal
}

// StartRequest asks for a workflow to be started once the transaction that
// writes it commits.
type StartRequest struct {
	TenantID   string
	WorkflowID string
	// Workflow is the registered workflow type name.
	Workflow string
	Input    any
	// Signal, when not empty, makes the start a signal-with-start of
	// Signal carrying SignalInput: a running workflow gets the signal, else
	// one starts. Input must ask for what the signal does too, since a
	// starter may start a new run without the signal (dispatch.Starter).
	Signal      string
	SignalInput any
	// Priority is the task queue priority key (PriorityUrgent ...).
	Priority int
}

// EnqueueStart writes r to the workflow-start outbox inside tx and
// notifies StartsChannel, which PostgreSQL delivers on commit. The
// request's turn is one more than the last turn of its tenant's requests
// of its priority still waiting (1 when none waits), so that ClaimStarts
// lets tenants take turns.
func EnqueueStart(ctx context.Context, tx sqlx.ExtContext, r StartRequest) error {
	in, err := json.Marshal(r.Input)
	if err != nil {
		return fmt.Errorf("encode %s input: %w", r.Workflow, err)
	}
	var signal, signalIn any
	if r.Signal != "" {
		b, err := json.Marshal(r.SignalInput)
		if err != nil {
			return fmt.Errorf("encode %s signal: %w", r.Signal, err)
		}
		signal, signalIn = r.Signal, b
	}
	if _, err := tx.ExecContext(ctx, `
		WITH s AS (
			INSERT INTO workflow_starts (tenant_id, workflow_id, workflow_type, input, signal_name, signal_input, priority, turn)
			SELECT $1, $2, $3, $4, $5, $6, $7, coalesce(max(turn), 0) + 1
			FROM workflow_starts WHERE tenant_id = $1 AND priority = $7
			RETURNING id)
		SELECT pg_notify($8, '') FROM s`,
		r.TenantID, r.WorkflowID, r.Workflow, in, signal, signalIn, r.Priority, StartsChannel); err != nil {
		return fmt.Errorf("enqueue %s start: %w", r.Workflow, err)
	}
	return nil
}

// WorkflowStart is a claimed start request.
type WorkflowStart struct {
	ID           int64           `db:"id"`
	TenantID     string          `db:"tenant_id"`
	WorkflowID   string          `db:"workflow_id"`
	WorkflowType string          `db:"workflow_type"`
	Input        json.RawMessage `db:"input"`
	SignalName   string          `db:"signal_name"`
	SignalInput  json.RawMessage `db:"signal_input"`
	Priority     int             `db:"priority"`
	Attempts     int             `db:"attempts"`
	// CreatedAt is when the request was written, with what asked for it.
	CreatedAt time.Time `db:"created_at"`
}

// ClaimStarts locks up to limit start requests that are due, most urgent
// first, skipping those another dispatcher holds: the urgent ones
// (PriorityUrgent) when urgent is set, the others when not, so a batch of
// routine starts never holds an urgent one. Within a priority the tenants
// take turns (EnqueueStart numbers each tenant's requests), each tenant's
// oldest first: a tenant that floods the outbox (Emergency alerts are
// never refused for back-pressure) delays its own starts, and another
// tenant's request is claimed in the next batch rather than after the
// whole flood. The outbox serves every tenant, so it is not filtered by
// tenant; each request carries its tenant.
func ClaimStarts(ctx context.Context, tx *sqlx.Tx, limit int, urgent bool) ([]WorkflowStart, error) {
	lane := "priority > $2"
	if urgent {
		lane = "priority <= $2" // IsUrgent
	}
	return SelectAll[WorkflowStart](ctx, tx, "claim workflow starts", `
		SELECT id, tenant_id, workflow_id, workflow_type, input, COALESCE(signal_name, '') AS signal_name,
			COALESCE(signal_input, 'null') AS signal_input, priority, attempts, created_at
		FROM workflow_starts WHERE available_at <= now() AND `+lane+`
		ORDER BY priority, turn, id LIMIT $1
		FOR UPDATE SKIP LOCKED`, limit, PriorityUrgent)
}

// DeleteStarts removes start requests that were carried out.
func DeleteStarts(ctx context.Context, tx sqlx.ExtContext, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM workflow_starts WHERE id = ANY($1)`, pq.Array(ids)); err != nil {
		return fmt.Errorf("delete workflow starts: %w", err)
	}
	return nil
}

// DeferStart records a failed attempt at start request id and makes it due
// again after delay.
func DeferStart(ctx context.Context, tx sqlx.ExtContext, id int64, reason string, delay time.Duration) error {
	if _, err := tx.ExecContext(ctx, `
		UPDATE workflow_starts SET attempts = attempts + 1, last_error = $2, available_at = now() + $3 * interval '1 millisecond'
		WHERE id = $1`, id, reason, delay.Milliseconds()); err != nil {
		return fmt.Errorf("defer workflow start: %w", err)
	}
	return nil
}

// CancelStart removes tenant's start request of workflowID if it has not
// been carried out yet, waiting for a dispatcher that holds it, and reports
// whether it removed one.
func CancelStart(ctx context.Context, db sqlx.ExecerContext, tenant, workflowID string) (bool, error) {
	res, err := db.ExecContext(ctx, `DELETE FROM workflow_starts WHERE tenant_id = $1 AND workflow_id = $2`, tenant, workflowID)
	if err != nil {
		return false, fmt.Errorf("cancel workflow start: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// PendingStarts counts the start requests not carried out yet.
func PendingStarts(ctx context.Context, db sqlx.QueryerContext) (int, error) {
	var n int
	if err := sqlx.GetContext(ctx, db, &n, `SELECT count(*) FROM workflow_starts`); err != nil {
		return 0, fmt.Errorf("count workflow starts: %w", err)
	}
	return n, nil
}

// AlertBacklog counts the NonEmergency alerts accepted and not final yet
// (Queued, waiting for or running their workflow, or Processing), of tenant
// and of every tenant. Each count stops at its limit plus one, so the cost
// stays bounded however deep the backlog; a limit of 0 skips that count.
func AlertBacklog(ctx context.Context, db sqlx.QueryerContext, tenant string, tenantLimit, globalLimit int) (ofTenant, overall int, err error) {
	upTo := func(limit int) int {
		if limit <= 0 {
			return 0
		}
		return limit + 1
	}
	if err := db.QueryRowxContext(ctx, `
		SELECT
			(SELECT count(*) FROM (SELECT 1 FROM alerts
				WHERE tenant_id = $1 AND status IN ('Queued', 'Processing') AND priority <> 'Emergency' LIMIT $2) t),
			(SELECT count(*) FROM (SELECT 1 FROM alerts
				WHERE status IN ('Queued', 'Processing') AND priority <> 'Emergency' LIMIT $3) g)`,
		tenant, upTo(tenantLimit), upTo(globalLimit)).Scan(&ofTenant, &overall); err != nil {
		return 0, 0, fmt.Errorf("count alert backlog: %w", err)
	}
	return ofTenant, overall, nil
}
