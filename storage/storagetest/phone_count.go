package storagetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// PhoneCount returns how many phone numbers the tenant's contacts have, so
// a test of a large import can check that every row's number was stored
// without paging through the contacts.
func PhoneCount(ctx context.Context, q sqlx.QueryerContext, tenant string) (int64, error) {
	var n int64
	if err := sqlx.GetContext(ctx, q, &n, `SELECT count(*) FROM person_phones WHERE tenant_id = $1`, tenant); err != nil {
		return 0, fmt.Errorf("count phones: %w", err)
	}
	return n, nil
}
