// Package channelstate keeps what channels record about their own work:
// voice and ETN calls, ETN call slots and address points, CAP messages,
// neighborhood post statuses and push device tokens. Its rows are the
// channel packages' types too (voice.Call, cap.Message, etn.Point, ...
// are aliases of them): one declaration of each.
package channelstate

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/storage"
)

// deleteSome runs the DELETE query and returns storage.ErrNotFound when it
// removed no row; what names the rows in an error.
func deleteSome(ctx context.Context, db *storage.DB, what, query string, args ...any) error {
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return storage.ErrNotFound
	}
	return nil
}
