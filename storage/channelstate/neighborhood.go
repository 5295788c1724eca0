package channelstate

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/storage"
)

// NeighborhoodStatus is the outcome of one neighborhood post of one account
// and group.
type NeighborhoodStatus struct {
	Tenant      string    `db:"tenant_id"`
	AlertID     *int64    `db:"alert_id"`
	MessageKey  string    `db:"message_key"`
	AccountID   string    `db:"account_id"`
	AccountName string    `db:"account_name"`
	GroupID     string    `db:"group_id"`
	GroupName   string    `db:"group_name"`
	Status      string    `db:"status"`
	PostID      string    `db:"post_id"`
	Error       string    `db:"error"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// NeighborhoodStatuses is the PostgreSQL store of neighborhood statuses
// (neighborhood_statuses).
type NeighborhoodStatuses struct {
	DB *storage.DB
}

// Record stores st with one statement; a status of the same message,
// account and group is replaced. Each status carries its tenant.
func (s *NeighborhoodStatuses) Record(ctx context.Context, st []NeighborhoodStatus) error {
	cols := make([][]string, 9)
	alerts := make([]*int64, len(st))
	for i, x := range st {
		for j, v := range []string{x.Tenant, x.MessageKey, x.AccountID, x.AccountName, x.GroupID, x.GroupName, x.Status, x.PostID, x.Error} {
			cols[j] = append(cols[j], v)
		}
		alerts[i] = x.AlertID
	}
	_, err := s.DB.ExecContext(ctx, `
		INSERT INTO neighborhood_statuses (tenant_id, message_key, account_id, account_name, group_id, group_name, status, post_id, error, alert_id)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
		ON CONFLICT (tenant_id, message_key, account_id, group_id) DO UPDATE SET
			status = excluded.status, post_id = excluded.post_id, error = excluded.error, updated_at = now()`,
		array(cols[0]), array(cols[1]), array(cols[2]), array(cols[3]), array(cols[4]), array(cols[5]), array(cols[6]), array(cols[7]), array(cols[8]), int64Array(alerts))
	if err != nil {
		return fmt.Errorf("record neighborhood statuses: %w", err)
	}
	return nil
}

// ForAlert returns a page of the alert's statuses in order (an ORDER BY
// list of the caller's fixed column expressions, never user input) and the
// total count.
func (s *NeighborhoodStatuses) ForAlert(ctx context.Context, tenant string, alertID int64, order string, limit, offset int) ([]NeighborhoodStatus, int, error) {
	var total int
	if err := s.DB.GetContext(ctx, &total, `SELECT count(*) FROM neighborhood_statuses WHERE tenant_id = $1 AND alert_id = $2`, tenant, alertID); err != nil {
		return nil, 0, fmt.Errorf("count neighborhood statuses: %w", err)
	}
	var out []NeighborhoodStatus
	err := s.DB.SelectContext(ctx, &out, `SELECT tenant_id, alert_id, message_key, account_id, account_name, group_id, group_name, status, post_id, error, updated_at
		FROM neighborhood_statuses WHERE tenant_id = $1 AND alert_id = $2 ORDER BY `+order+` LIMIT $3 OFFSET $4`, tenant, alertID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list neighborhood statuses: %w", err)
	}
	return out, total, nil
}
