package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Analyze refreshes the planner's statistics of tables (trusted names,
// never input) after a write large enough to mislead it, and reports
// whether it ran. One refresh of the same tables runs at a time: a caller
// that finds one running leaves it to that one rather than queueing
// behind it (ANALYZE of a table waits for another of the same table),
// holding a connection for nothing.
func Analyze(ctx context.Context, db *DB, tables ...string) (bool, error) {
	list := strings.Join(tables, ", ")
	ran := false
	err := db.InTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &ran, `SELECT pg_try_advisory_xact_lock(hashtextextended('analyze ' || $1, 0))`, list); err != nil || !ran {
			return err
		}
		_, err := tx.ExecContext(ctx, `ANALYZE `+list)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("analyze %s: %w", list, err)
	}
	return ran, nil
}
