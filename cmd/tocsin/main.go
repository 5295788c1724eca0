// Command tocsin runs tocsin: the HTTP API (serve), the Temporal worker
// (worker), both in one process (dev), database migrations (migrate),
// loopback email and text providers (sandbox), and mints development tokens
// (token).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tocsin/tocsin/api"
	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/storage"
)

const usage = `usage: tocsin <command> [flags]

commands:
  serve     run the HTTP API (--migrate applies migrations first)
  worker    run the Temporal worker
  dev       run the API and the worker in one process, after migrating
  migrate   apply database migrations (--create-db creates the database first)
  openapi   print the OpenAPI document
  token     print a development bearer token: token --tenant T [--sub S] [--scope X]... [--ttl D] (T a decimal tenant id)
  sandbox   run a loopback SMTP server on TOCSIN_SMTP_ADDR and text-message endpoint at
            TOCSIN_SMS_URL, serving what they receive at --inspect (default 127.0.0.1:8025)

Settings come from TOCSIN_* environment variables; see the README.
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tocsin:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	switch args[0] {
	case "token":
		return mintToken(cfg, args[1:], stdout)
	case "openapi":
		doc, err := api.Document()
		if err != nil {
			return err
		}
		_, err = stdout.Write(doc)
		return err
	}
	logger := newLogger(cfg.LogLevel, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch args[0] {
	case "migrate":
		if err := optionalStep(args, "create-db", "create the database first when it does not exist",
			func() error { return storage.EnsureDatabase(ctx, cfg.DatabaseURL) }); err != nil {
			return err
		}
		return migrate(ctx, cfg, logger)
	case "serve":
		if err := optionalStep(args, "migrate", "apply migrations before serving",
			func() error { return migrate(ctx, cfg, logger) }); err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error { return a.Serve(ctx, cfg.HTTPAddr) })
	case "worker":
		return withApp(ctx, cfg, logger, func(a *app.App) error { return a.Work(ctx, cfg.WorkerMetricsAddr) })
	case "sandbox":
		return runSandbox(ctx, cfg, args[1:], logger)
	case "dev":
		if err := migrate(ctx, cfg, logger); err != nil {
			return err
		}
		return withApp(ctx, cfg, logger, func(a *app.App) error {
			g, gctx := errgroup.WithContext(ctx)
			g.Go(func() error { return a.Serve(gctx, cfg.HTTPAddr) })
			g.Go(func() error { return a.Work(gctx, cfg.WorkerMetricsAddr) })
			return g.Wait()
		})
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// optionalStep parses the flags of the command args[0], whose one flag,
// the switch name, asks for step before the command's work, and runs step
// when it is set.
func optionalStep(args []string, name, usage string, step func() error) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	on := fs.Bool(name, false, usage)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if !*on {
		return nil
	}
	return step()
}

// withApp opens the app, runs fn with it and closes it.
func withApp(ctx context.Context, cfg config.Config, logger *slog.Logger, fn func(*app.App) error) error {
	a, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}

func migrate(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	db, err := storage.Open(ctx, cfg.DatabaseURL, 2)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	logger.Info("migrations applied")
	return nil
}

// runSandbox runs the loopback providers until ctx ends.
func runSandbox(ctx context.Context, cfg config.Config, args []string, logger *slog.Logger) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	inspect := fs.String("inspect", "127.0.0.1:8025", "where to serve the received messages as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sb, err := sandbox.Start(sandbox.Config{SMTPAddr: cfg.SMTPAddr, SMSURL: cfg.SMSURL, SMSToken: cfg.SMSToken})
	if err != nil {
		return err
	}
	defer sb.Close()
	ln, err := net.Listen("tcp", *inspect)
	if err != nil {
		return fmt.Errorf("sandbox inspect listen %s: %w", *inspect, err)
	}
	srv := &http.Server{Handler: sb.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	logger.Info("sandbox running", "smtp", sb.SMTP.Addr(), "sms", sb.SMS.URL(), "inspect", "http://"+ln.Addr().String()+"/messages")
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func mintToken(cfg config.Config, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant id (required)")
	sub := fs.String("sub", "dev-user", "subject (the user)")
	ttl := fs.Duration("ttl", 24*time.Hour, "lifetime of the token")
	var scopes stringList
	fs.Var(&scopes, "scope", "a scope to grant; repeat for more (default: every tenant scope, not operator)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" {
		return errors.New("token needs --tenant")
	}
	if !auth.CanonicalTenant(*tenant) {
		// The API refuses a token whose tenant claim is not one.
		return fmt.Errorf("--tenant %q is not a tenant id: a decimal number without sign, spaces or leading zeros, such as 1001", *tenant)
	}
	if cfg.JWTSecret == "" {
		return errors.New("minting needs TOCSIN_JWT_SECRET (or TOCSIN_ENV=development)")
	}
	if len(scopes) == 0 {
		scopes = auth.AllScopes
	}
	tok, err := auth.Mint(cfg.JWTSecret, auth.Principal{Subject: *sub, Tenant: *tenant, Scopes: scopes}, *ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok)
	return err
}
