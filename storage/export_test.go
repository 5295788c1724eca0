package storage

import (
	"context"
	"io/fs"
)

// MigrateFrom applies the migrations of fsys as Migrate applies the
// embedded ones, so tests can run migrations of their own.
func (db *DB) MigrateFrom(ctx context.Context, fsys fs.FS) error { return db.migrate(ctx, fsys) }
