// Package benchdata is the SQL of tocsin-bench: set-based seeding of large
// tenants, what a benchmark reads back to check its results, and bringing
// the database to rest between measured phases.
package benchdata

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// SeedContacts writes n contacts of tenant with a phone each, all members
// of one new group, and returns the group's id and the first contact's id.
func SeedContacts(ctx context.Context, db *storage.DB, tenant string, n int) (groupID, first int64, err error) {
	if _, err := db.ExecContext(ctx, `INSERT INTO people (tenant_id, first_name, last_name) SELECT $1, 'First' || g, 'Last' || g FROM generate_series(1, $2::int) g`, tenant, n); err != nil {
		return 0, 0, fmt.Errorf("seed: %w", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO person_phones (tenant_id, person_id, number) SELECT tenant_id, id, '+1' || (2000000000 + id)::text FROM people WHERE tenant_id = $1`, tenant); err != nil {
		return 0, 0, fmt.Errorf("seed: %w", err)
	}
	if err := db.GetContext(ctx, &groupID, `INSERT INTO groups (tenant_id, name) VALUES ($1, 'everyone') RETURNING id`, tenant); err != nil {
		return 0, 0, fmt.Errorf("seed group: %w", err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE groups SET path = '/' || id || '/' WHERE tenant_id = $1 AND id = $2`, tenant, groupID); err != nil {
		return 0, 0, fmt.Errorf("seed group path: %w", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO group_memberships (tenant_id, group_id, person_id) SELECT $1, $2, id FROM people WHERE tenant_id = $1`, tenant, groupID); err != nil {
		return 0, 0, fmt.Errorf("seed members: %w", err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE people; ANALYZE person_phones; ANALYZE group_memberships`); err != nil {
		return 0, 0, err
	}
	err = db.GetContext(ctx, &first, `SELECT min(id) FROM people WHERE tenant_id = $1`, tenant)
	return groupID, first, err
}

// Coverage is what became of an alert's recipients on one channel in its
// first cycle.
type Coverage struct {
	// Rows counts final result rows; Covered the distinct recipients they
	// are for; Recipients all of the alert's recipients.
	Rows, Covered, Recipients int64
}

// FirstCycleCoverage reads the coverage of the tenant's alert on channel.
func FirstCycleCoverage(ctx context.Context, db *storage.DB, tenant string, alertID int64, channel string) (Coverage, error) {
	var c Coverage
	if _, err := db.ExecContext(ctx, `ANALYZE alert_deliveries; ANALYZE alert_recipients`); err != nil {
		return c, err
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT seq) FROM alert_deliveries
		WHERE tenant_id = $1 AND alert_id = $2 AND channel = $3 AND cycle = 1
		AND status IN ('Sent', 'Delivered', 'Failed', 'Skipped')`, tenant, alertID, channel).Scan(&c.Rows, &c.Covered); err != nil {
		return c, fmt.Errorf("count results: %w", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM alert_recipients WHERE tenant_id = $1 AND alert_id = $2`, tenant, alertID).Scan(&c.Recipients); err != nil {
		return c, fmt.Errorf("count recipients: %w", err)
	}
	return c, nil
}

// AlertKey names an alert of a tenant.
type AlertKey struct {
	Tenant string
	ID     int64
}

// FinalTimes returns, of the alerts, those that reached Sent or Failed with
// when they did.
func FinalTimes(ctx context.Context, db *storage.DB, alerts []AlertKey) (map[int64]time.Time, error) {
	tenants, ids := make([]string, len(alerts)), make([]int64, len(alerts))
	for i, a := range alerts {
		tenants[i], ids[i] = a.Tenant, a.ID
	}
	rows, err := db.QueryContext(ctx, `SELECT a.id, coalesce(a.sent_at, a.failed_at) FROM alerts a
		JOIN unnest($1::text[], $2::bigint[]) AS k(tenant_id, id) ON a.tenant_id = k.tenant_id AND a.id = k.id
		WHERE a.sent_at IS NOT NULL OR a.failed_at IS NOT NULL`, pq.StringArray(tenants), pq.Int64Array(ids))
	if err != nil {
		return nil, fmt.Errorf("read final times: %w", err)
	}
	defer rows.Close()
	out := map[int64]time.Time{}
	for rows.Next() {
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("read final time: %w", err)
		}
		out[id] = at
	}
	return out, rows.Err()
}

// FirstDistributionList returns the id of the tenant's oldest distribution list.
func FirstDistributionList(ctx context.Context, db *storage.DB, tenant string) (int64, error) {
	var id int64
	if err := db.GetContext(ctx, &id, `SELECT id FROM distribution_lists WHERE tenant_id = $1 ORDER BY id LIMIT 1`, tenant); err != nil {
		return 0, fmt.Errorf("first distribution list: %w", err)
	}
	return id, nil
}

// ServerVersion returns the PostgreSQL server's version, empty when it
// cannot be read.
func ServerVersion(ctx context.Context, db *storage.DB) string {
	var v string
	_ = db.GetContext(ctx, &v, `SELECT current_setting('server_version')`)
	return v
}

// VacuumContacts vacuums and analyzes the contact tables.
func VacuumContacts(ctx context.Context, db *storage.DB) error {
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE people, person_emails, person_phones, distribution_list_members`); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	return nil
}

// Checkpoint asks for a checkpoint; a role that may not take one is not an error.
func Checkpoint(ctx context.Context, admin *storage.DB) {
	_, _ = admin.ExecContext(ctx, `CHECKPOINT`)
}

// CreateSchema creates the schema name; DropSchema drops it with all it holds.
func CreateSchema(ctx context.Context, admin *storage.DB, name string) error {
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+pq.QuoteIdentifier(name)); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	return nil
}

// DropSchema drops the schema name with everything in it.
func DropSchema(ctx context.Context, admin *storage.DB, name string) {
	_, _ = admin.ExecContext(ctx, "DROP SCHEMA "+pq.QuoteIdentifier(name)+" CASCADE")
}

// UndispatchedEvents counts the tenant's events the hook dispatcher has
// not dispatched yet.
func UndispatchedEvents(ctx context.Context, db *storage.DB, tenant string) (int, error) {
	var n int
	if err := db.GetContext(ctx, &n, `SELECT count(*) FROM events WHERE tenant_id = $1 AND dispatched_at IS NULL`, tenant); err != nil {
		return 0, fmt.Errorf("count undispatched events: %w", err)
	}
	return n, nil
}
