// Package testdb makes PostgreSQL databases for tests: each is a copy of a
// template database the embedded migrations were applied to once.
package testdb

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Each test database is a copy of a template database that the embedded
// migrations were applied to once: CREATE DATABASE … TEMPLATE copies a
// migrated database several times faster than migrating a fresh schema, and
// dropping a database is faster than dropping a schema of the same tables.
// The template is named after the migrations' digest, so test binaries built
// from the same migrations share it (also across runs), and a change to a
// migration builds a new one. Test binaries run in parallel processes: the
// template is built under a PostgreSQL advisory lock, and a template left
// half-built by a killed process is rebuilt.

// Test binaries of several packages run at once (go test -p), and each
// running test's stack holds database connections: one package's tests hold
// up to about 65 of PostgreSQL's default 100 at their peak. So a test binary
// waits for its turn before it makes its first database, and keeps the turn
// until it exits (a session advisory lock on a connection of its own, which
// PostgreSQL releases when the process dies): the packages that use the
// database run one after another, while the builds and the tests of the
// other packages run beside them. A binary waiting for the turn asks for it
// every turnPoll on a connection it closes again, so the binaries that wait
// (as many as go test runs at once, less one) hold none of the connections
// the one whose turn it is needs.
var turn turnHolder

// turnHolder is a process's turn; its zero value waits for it.
type turnHolder struct {
	sync.Mutex
	conn *sqlx.Conn // holds the lock; never closed before the process exits
	db   *storage.DB
}

// turnKey is the advisory lock of the turn, apart from the template's.
const turnKey = 0x746f6373696e01

// turnPoll is how often a test binary waiting for the turn asks for it.
const turnPoll = 200 * time.Millisecond

// await returns once this process holds the turn of the server base
// names, waiting for the process that holds it to exit.
func (h *turnHolder) await(ctx context.Context, base string) error {
	h.Lock()
	defer h.Unlock()
	if h.conn != nil {
		return nil
	}
	db, err := storage.Open(ctx, base, 1)
	if err != nil {
		return err
	}
	// Every connection goes back closed: none is held between tries.
	db.SetMaxIdleConns(0)
	fail := func(err error) error {
		_ = db.Close()
		return fmt.Errorf("wait for the test database turn: %w", err)
	}
	for {
		conn, err := db.Connx(ctx)
		if err != nil {
			return fail(err)
		}
		var took bool
		if err := conn.GetContext(ctx, &took, `SELECT pg_try_advisory_lock($1)`, turnKey); err != nil {
			_ = conn.Close()
			return fail(err)
		}
		if took {
			h.conn, h.db = conn, db
			return nil
		}
		_ = conn.Close()
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(turnPoll):
		}
	}
}

// templateMaxAge is how long a template no binary has built or checked stays
// before a later run removes it.
const templateMaxAge = 24 * time.Hour

var template struct {
	sync.Mutex
	name string
}

// databaseURL returns dsn pointing at database name.
func databaseURL(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

// baseName is the name of the database base names; test and template
// databases are named after it.
func baseName(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// migratedTemplate returns the name of the migrated template database,
// building it when no test binary has yet.
func migratedTemplate(ctx context.Context, admin *storage.DB, base string) (string, error) {
	template.Lock()
	defer template.Unlock()
	if template.name != "" {
		return template.name, nil
	}
	digest, err := storage.MigrationsDigest()
	if err != nil {
		return "", err
	}
	name := baseName(base) + "_tmpl_" + digest[:16]

	// An advisory lock is held by a session: keep one connection for it.
	conn, err := admin.Connx(ctx)
	if err != nil {
		return "", fmt.Errorf("template lock connection: %w", err)
	}
	defer conn.Close()
	const lockKey = 0x746f6373696e // "tocsin"
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, lockKey) }()

	var ready []bool
	if err := conn.SelectContext(ctx, &ready, `SELECT datistemplate FROM pg_database WHERE datname = $1`, name); err != nil {
		return "", fmt.Errorf("look up template: %w", err)
	}
	now := time.Now().Unix()
	if len(ready) == 0 || !ready[0] {
		if err := buildTemplate(ctx, conn, base, name, len(ready) > 0); err != nil {
			return "", err
		}
	}
	// The comment records when a binary last used the template; templates of
	// migrations nobody has tested for a day are removed.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`COMMENT ON DATABASE %s IS 'stacktest %d'`, pq.QuoteIdentifier(name), now)); err != nil {
		return "", fmt.Errorf("mark template: %w", err)
	}
	var stale []string
	if err := conn.SelectContext(ctx, &stale, `
		SELECT d.datname FROM pg_database d JOIN pg_shdescription s ON s.objoid = d.oid
		WHERE d.datname LIKE $1 AND d.datname <> $2 AND s.description LIKE 'stacktest %'
		  AND split_part(s.description, ' ', 2)::bigint < $3`,
		baseName(base)+`\_tmpl\_%`, name, now-int64(templateMaxAge/time.Second)); err != nil {
		return "", fmt.Errorf("list stale templates: %w", err)
	}
	for _, s := range stale {
		q := pq.QuoteIdentifier(s)
		_, _ = conn.ExecContext(ctx, `ALTER DATABASE `+q+` IS_TEMPLATE false`)
		_, _ = conn.ExecContext(ctx, `DROP DATABASE IF EXISTS `+q+` WITH (FORCE)`)
	}
	template.name = name
	return name, nil
}

// buildTemplate creates database name, migrates it and marks it a template
// that accepts no connections (CREATE DATABASE … TEMPLATE needs it idle).
func buildTemplate(ctx context.Context, conn *sqlx.Conn, base, name string, exists bool) error {
	q := pq.QuoteIdentifier(name)
	if exists { // left half-built
		if _, err := conn.ExecContext(ctx, `DROP DATABASE `+q+` WITH (FORCE)`); err != nil {
			return fmt.Errorf("drop half-built template: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+q); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	db, err := storage.Open(ctx, databaseURL(base, name), 1)
	if err != nil {
		return fmt.Errorf("open template: %w", err)
	}
	err = db.Migrate(ctx)
	_ = db.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+q+` WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`); err != nil {
		return fmt.Errorf("mark template: %w", err)
	}
	return nil
}

// New creates a database named after base's database and suffix from the
// migrated template (building the template when needed) and returns it with
// the function that drops it.
func New(ctx context.Context, base, suffix string) (*storage.DB, func(), error) {
	if err := storage.EnsureDatabase(ctx, base); err != nil {
		return nil, nil, err
	}
	if err := turn.await(ctx, base); err != nil {
		return nil, nil, err
	}
	admin, err := storage.Open(ctx, base, 2)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := migratedTemplate(ctx, admin, base)
	if err != nil {
		_ = admin.Close()
		return nil, nil, err
	}
	name := baseName(base) + "_t_" + suffix
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+pq.QuoteIdentifier(name)+` TEMPLATE `+pq.QuoteIdentifier(tmpl)); err != nil {
		_ = admin.Close()
		return nil, nil, fmt.Errorf("copy template %s: %w", tmpl, err)
	}
	drop := func() {
		_, _ = admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+pq.QuoteIdentifier(name)+` WITH (FORCE)`)
		_ = admin.Close()
	}
	db, err := storage.Open(ctx, databaseURL(base, name), 10)
	if err != nil {
		drop()
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	return db, drop, nil
}

// Name returns the name of the database db is connected to.
func Name(ctx context.Context, db *storage.DB) (string, error) {
	var name string
	err := db.GetContext(ctx, &name, `SELECT current_database()`)
	return name, err
}

// Exists reports whether the server db is connected to has database name.
func Exists(ctx context.Context, db *storage.DB, name string) (bool, error) {
	var n int
	err := db.GetContext(ctx, &n, `SELECT count(*) FROM pg_database WHERE datname = $1`, name)
	return n > 0, err
}
