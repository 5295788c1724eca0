package storagetest

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage/directory"
)

// personTables are the tables that hold a person's data: deleting a user
// empties them of the user's rows.
var personTables = []string{"people", "person_emails", "person_phones", "person_devices", "person_locations", "group_memberships",
	"directory_weather_notifications", "directory_verifications", "directory_verification_nonces"}

// PersonRowCounts returns, per table holding people's data, how many rows
// the tenant has there. Tests use it to check that deleting a user leaves
// nothing of it behind.
func PersonRowCounts(ctx context.Context, q sqlx.QueryerContext, tenant string) (map[string]int, error) {
	out := make(map[string]int, len(personTables))
	for _, table := range personTables {
		var n int
		if err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM `+table+` WHERE tenant_id = $1`, tenant); err != nil {
			return nil, fmt.Errorf("count %s: %w", table, err)
		}
		out[table] = n
	}
	return out, nil
}

// StoredCodes counts the tenant's verification codes as stored: plain
// codes kept for the testing operations, and pending codes kept only as
// a hash.
type StoredCodes struct {
	Plain         int `db:"plain"`
	HashedPending int `db:"hashed_pending"`
}

// CountStoredCodes returns how the tenant's verification codes of a kind
// are stored, so tests can check that a plain code is kept only while the
// testing operations need it.
func CountStoredCodes(ctx context.Context, q sqlx.QueryerContext, tenant string, kind directory.Kind) (StoredCodes, error) {
	var c StoredCodes
	if err := sqlx.GetContext(ctx, q, &c, `
		SELECT count(*) FILTER (WHERE testing_code IS NOT NULL) AS plain,
		       count(*) FILTER (WHERE code_hash IS NOT NULL AND status = 'Pending') AS hashed_pending
		FROM directory_verifications WHERE tenant_id = $1 AND kind = $2`, tenant, kind); err != nil {
		return c, fmt.Errorf("count stored codes: %w", err)
	}
	return c, nil
}

// AgeNonces makes the tenant's reserved nonces and nonce rate-limit counts
// older by age, as if they had been reserved that long before, so tests
// need not wait for their retention to end.
func AgeNonces(ctx context.Context, q sqlx.ExecerContext, tenant string, age time.Duration) error {
	for _, table := range []string{"directory_verification_nonces", "directory_nonce_window"} {
		if _, err := q.ExecContext(ctx, `UPDATE `+table+` SET created_at = created_at - make_interval(secs => $2) WHERE tenant_id = $1`,
			tenant, age.Seconds()); err != nil {
			return fmt.Errorf("age %s: %w", table, err)
		}
	}
	return nil
}
