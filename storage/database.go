package storage

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/lib/pq"
)

// EnsureDatabase creates the database named in the connection URL when it
// does not exist, connecting to the server's "postgres" database to do so.
func EnsureDatabase(ctx context.Context, dsn string) error {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("the database URL must look like postgres://user@host:5432/name")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return fmt.Errorf("the database URL names no database")
	}
	admin := *u
	admin.Path = "/postgres"
	db, err := sql.Open("postgres", admin.String())
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		return fmt.Errorf("PostgreSQL does not answer at %s (%w); start it (on Debian: apt-get install postgresql && pg_ctlcluster 15 main start) or set DATABASE_URL", u.Redacted(), err)
	}
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil && !IsUniqueViolation(err, "") {
		if pe, ok := err.(*pq.Error); !ok || pe.Code != "42P04" { // duplicate_database: created concurrently
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
}
