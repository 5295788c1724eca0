// Package storage keeps tocsin's state: PostgreSQL through sqlx with
// embedded migrations, and objects on MinIO. Every row of tenant data carries
// tenant_id and every query filters on it.
package storage

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Errors that repositories return; the API maps them to problem responses.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// DB is the PostgreSQL handle shared by the repositories.
type DB struct {
	*sqlx.DB
	// URL is the connection URL it was opened with (for LISTEN).
	URL string
}

// Open connects to PostgreSQL and checks the connection.
func Open(ctx context.Context, url string, maxOpen int) (*DB, error) {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if maxOpen > 0 {
		db.SetMaxOpenConns(maxOpen)
		db.SetMaxIdleConns(maxOpen)
	}
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return &DB{DB: db, URL: url}, nil
}

// Migrate applies every embedded migration that has not run yet.
func (db *DB) Migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations folder: %w", err)
	}
	return db.migrate(ctx, sub)
}

// migrate applies every migration of fsys that has not run yet.
func (db *DB) migrate(ctx context.Context, fsys fs.FS) error {
	p, err := goose.NewProvider(goose.DialectPostgres, db.DB.DB, fsys, goose.WithDisableGlobalRegistry(true),
		// Each area numbers its migrations in its own range (00100s, 00200s, ...).
		goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// MigrationsDigest returns a hex digest of the embedded migrations' names
// and contents: two databases migrated by binaries with the same digest have
// the same schema.
func MigrationsDigest() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := migrations.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// InTx runs fn in a transaction, committing when it returns nil.
func (db *DB) InTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// InSnapshot runs fn in a read-only REPEATABLE READ transaction: every
// statement of fn sees the same snapshot, so a count and the page it
// counts agree however the rows change meanwhile.
func (db *DB) InSnapshot(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// NotFound turns sql.ErrNoRows into ErrNotFound and leaves other errors as they are.
func NotFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// CountLimit is how far a page's total counts at the least: a request
// matching more rows than this (and than reach past the end of the page
// asked for) is answered with an inexact total, "at least this many",
// rather than by reading every row it matches.
const CountLimit = 10_000

// Total is how many rows a paged request matches: N exactly when Exact,
// otherwise at least N, and then more than reach the end of the page read.
type Total struct {
	N     int64
	Exact bool
}

// ExactTotal is a Total of n rows exactly.
func ExactTotal(n int64) Total { return Total{N: n, Exact: true} }

// Count is how Page counts the rows of a request: CountRows or CountExact.
type Count struct {
	sql   string
	exact bool
}

// CountRows counts the rows that from ("FROM … WHERE …", the FROM and WHERE
// of the page's own statement) selects, but stops after max(CountLimit,
// offset+limit+1) of them, so that the count costs no more than reading
// CountLimit rows or the page itself: the total is exact when it stops
// short of that, and "at least that many" otherwise.
func CountRows(from string) Count { return Count{sql: from} }

// CountExact is a statement answering the exact number of rows of a
// request: from a source that stays cheap whatever their number (a count
// kept with the rows, such as an alert's recipient count), or over a set
// no tenant holds a great many of (its files).
func CountExact(sql string) Count { return Count{sql: sql, exact: true} }

// CountQuery is the statement and arguments Page counts a request's rows
// with for a page at limit and offset (args itself is left as it is).
func CountQuery(c Count, args []any, limit, offset int) (string, []any) {
	if c.exact {
		return c.sql, args
	}
	n := len(args)
	return `SELECT count(*) FROM (SELECT 1 ` + c.sql + ` LIMIT $` + strconv.Itoa(n+1) + `) counted`,
		append(args[:n:n], countUpTo(limit, offset))
}

// countUpTo is how many rows CountRows counts at most for a page at limit
// and offset: enough to tell whether a row follows the page.
func countUpTo(limit, offset int) int64 {
	return max(int64(CountLimit), int64(offset)+int64(limit)+1)
}

// Page reads one page of rows and how many rows match: count counts them
// (CountRows or CountExact) and list (ending with its ORDER BY) reads them,
// both with args; limit and offset are bound to list as the next two
// parameters. When no row is left from offset on, list is not run. what
// names the rows in errors ("count what: …", "list what: …"). Given a
// database rather than a transaction, it reads both in one read-only
// snapshot, so the total and the page agree while rows are written.
func Page[T any](ctx context.Context, q sqlx.QueryerContext, what string, count Count, list string, args []any, limit, offset int) (rows []T, total Total, err error) {
	if db, ok := q.(snapshotter); ok {
		err = db.InSnapshot(ctx, func(tx *sqlx.Tx) error {
			rows, total, err = Page[T](ctx, tx, what, count, list, args, limit, offset)
			return err
		})
		return rows, total, err
	}
	return page[T](ctx, q, what, count, list, args, limit, offset)
}

// snapshotter is what Page needs of a database to read in one snapshot.
type snapshotter interface {
	InSnapshot(ctx context.Context, fn func(tx *sqlx.Tx) error) error
}

func page[T any](ctx context.Context, q sqlx.QueryerContext, what string, count Count, list string, args []any, limit, offset int) ([]T, Total, error) {
	var n int64
	countSQL, countArgs := CountQuery(count, args, limit, offset)
	if err := sqlx.GetContext(ctx, q, &n, countSQL, countArgs...); err != nil {
		return nil, Total{}, fmt.Errorf("count %s: %w", what, err)
	}
	total := Total{N: n, Exact: count.exact || n < countUpTo(limit, offset)}
	if n == 0 || int64(offset) >= n {
		return []T{}, total, nil
	}
	query, pageArgs := PageQuery(list, args, limit, offset)
	rows, err := SelectAll[T](ctx, q, "list "+what, query, pageArgs...)
	if err != nil {
		return nil, Total{}, err
	}
	return rows, total, nil
}

// PageQuery is the statement and arguments Page reads a page with: list
// with limit and offset bound as the parameters after args (args itself
// is left as it is).
func PageQuery(list string, args []any, limit, offset int) (string, []any) {
	n := len(args)
	return list + ` LIMIT $` + strconv.Itoa(n+1) + ` OFFSET $` + strconv.Itoa(n+2), append(args[:n:n], limit, offset)
}

// Explain returns PostgreSQL's plan of query with args: EXPLAIN with
// options (such as "ANALYZE" and "FORMAT JSON"), in text format without
// any, so that tests and benchmarks can show which indexes a statement
// uses and how many rows it reads.
func Explain(ctx context.Context, q sqlx.QueryerContext, options []string, query string, args ...any) (string, error) {
	head := "EXPLAIN "
	if len(options) > 0 {
		head = "EXPLAIN (" + strings.Join(options, ", ") + ") "
	}
	var lines []string
	if err := sqlx.SelectContext(ctx, q, &lines, head+query, args...); err != nil {
		return "", fmt.Errorf("explain: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

// ExecOne runs a statement that must change a row: when it changes none,
// ErrNotFound. what names the statement in errors ("delete list: …").
func ExecOne(ctx context.Context, q sqlx.ExecerContext, what, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// GetOne reads the one row query answers into a T: no row is ErrNotFound,
// and what names the row in other errors ("load subscription: …").
func GetOne[T any](ctx context.Context, q sqlx.QueryerContext, what, query string, args ...any) (T, error) {
	var out T
	err := sqlx.GetContext(ctx, q, &out, query, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return out, ErrNotFound
	}
	if err != nil {
		return out, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// SelectAll reads every row query answers into a slice of T (nil when there
// are none). what names the rows in errors ("read answers: …").
func SelectAll[T any](ctx context.Context, q sqlx.QueryerContext, what, query string, args ...any) ([]T, error) {
	var out []T
	if err := sqlx.SelectContext(ctx, q, &out, query, args...); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// IsUniqueViolation reports whether err is a PostgreSQL unique-constraint violation,
// optionally of the named constraint.
func IsUniqueViolation(err error, constraint string) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	return constraint == "" || pe.Constraint == constraint
}
