package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/benchdata"
)

// benchApp builds the API of a benchmark run, in this process: development
// settings on the test services, the given task queue and database, logs
// discarded, then what configure changes. The caller closes its Temporal
// client.
func benchApp(ctx context.Context, temporal, minio, queue string, db *storage.DB, configure ...func(*config.Config)) (*app.App, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	cfg.Env, cfg.JWTSecret, cfg.JWKSURL, cfg.DatabaseURL = "development", config.DevJWTSecret, "", db.URL
	cfg.TemporalAddress, cfg.TemporalNamespace, cfg.TemporalTaskQueue = temporal, "default", queue
	cfg.MinIOEndpoint, cfg.MinIOBucket, cfg.MinIOAccessKey, cfg.MinIOSecretKey = minio, "bench", "minioadmin", "minioadmin"
	for _, c := range configure {
		c(&cfg)
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	objects, err := storage.OpenObjects(ctx, storage.ObjectsConfig{Endpoint: minio, AccessKey: "minioadmin", SecretKey: "minioadmin", Bucket: "bench"})
	if err != nil {
		return nil, err
	}
	a, err := app.New(cfg, logger)
	if err != nil {
		return nil, err
	}
	if a.Temporal, err = a.DialTemporal(ctx); err != nil {
		return nil, err
	}
	a.DB, a.Objects = db, objects
	return a, nil
}

// serveAPI serves a's HTTP API on a free loopback port and returns its base
// URL and what shuts it down.
func serveAPI(ctx context.Context, a *app.App) (base string, stop func(), err error) {
	srv, err := a.Server(ctx)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() { _ = srv.App.Listener(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.App.ShutdownWithTimeout(5 * time.Second) }, nil
}

// logf writes a line of progress to standard error, after the time.
func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, a...)...)
}

// runSchema creates a schema of its own for a benchmark run in the
// database of dbURL (created when missing) and answers its name, a DSN that
// uses it, and a drop function that removes it (unless keep).
func runSchema(ctx context.Context, dbURL string, keep bool) (schema, dsn string, drop func(), err error) {
	if err := storage.EnsureDatabase(ctx, dbURL); err != nil {
		return "", "", nil, err
	}
	schema = "bench_" + randomSuffix()
	admin, err := storage.Open(ctx, dbURL, 2)
	if err != nil {
		return "", "", nil, err
	}
	if err := benchdata.CreateSchema(ctx, admin, schema); err != nil {
		_ = admin.Close()
		return "", "", nil, err
	}
	drop = func() {
		if !keep {
			benchdata.DropSchema(context.Background(), admin, schema)
		}
		_ = admin.Close()
	}
	return schema, schemaDSN(dbURL, schema), drop, nil
}

// migratedSchema is runSchema with the schema migrated: it answers a pool
// of conns connections on it, its name and DSN, and a function that closes
// the pool and drops the schema (unless keep).
func migratedSchema(ctx context.Context, dbURL string, keep bool, conns int) (db *storage.DB, schema, dsn string, done func(), err error) {
	schema, dsn, drop, err := runSchema(ctx, dbURL, keep)
	if err != nil {
		return nil, "", "", nil, err
	}
	if db, err = storage.Open(ctx, dsn, conns); err != nil {
		drop()
		return nil, "", "", nil, err
	}
	done = func() { _ = db.Close(); drop() }
	if err := db.Migrate(ctx); err != nil {
		done()
		return nil, "", "", nil, err
	}
	return db, schema, dsn, done, nil
}
