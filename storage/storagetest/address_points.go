package storagetest

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// LockAddressPoints begins a transaction that locks the ETN address points
// of every tenant and their lists (etn_address_points and
// etn_address_point_lists, ACCESS EXCLUSIVE) and returns it:
// until it ends, every statement that reads address points waits, as one
// over a very large list runs long. The lock is the database's, so only a
// test with a database of its own may take it.
func LockAddressPoints(ctx context.Context, db *storage.DB) (*sqlx.Tx, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE etn_address_points, etn_address_point_lists IN ACCESS EXCLUSIVE MODE`); err != nil {
		_ = tx.Rollback()
		return nil, fmt.Errorf("lock address points: %w", err)
	}
	return tx, nil
}
