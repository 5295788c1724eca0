// Package app wires tocsin's parts together from a Config: the database, the
// object store, Temporal, the HTTP API and the worker.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/api"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/channels/ratelimit"
	"github.com/tocsin/tocsin/channels/sms"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/worker"
	"github.com/tocsin/tocsin/workflows"
)

// App holds the connections and the parts both the API and the worker use.
// Everything that needs them gets them from here; none builds its own.
type App struct {
	Config config.Config
	Logger *slog.Logger
	// Secrets seals and opens provider credentials and hook signing secrets
	// (NewSecretsBox).
	Secrets *secrets.Box
	// Outbound is the SSRF policy of hook targets and tenants' provider
	// URLs (TOCSIN_HOOK_ALLOW_HOSTS, TOCSIN_HOOK_ALLOW_HTTP): the API checks
	// URLs with it when they are saved, the worker every connection.
	Outbound *hooks.Policy
	// Codec encrypts the payloads of Temporal with TOCSIN_PAYLOAD_KEYS:
	// the Temporal client's (DialTemporal) and the codec endpoint's.
	Codec    *payloadcrypt.Codec
	DB       *storage.DB
	Objects  *storage.Objects
	Temporal client.Client
	Metrics  *prometheus.Registry
	// Starts wakes the workflow starter of this process (see Work) when
	// the API of this process commits a start request.
	Starts *dispatch.Waker
}

// NewSecretsBox builds the box for TOCSIN_SECRETS_KEY. The development key is
// used only when the key is unset and TOCSIN_ENV is development; otherwise an
// unset or unusable key is an error.
func NewSecretsBox(cfg config.Config) (*secrets.Box, error) {
	key := cfg.SecretsKey
	if key == "" {
		if cfg.Env != "development" {
			return nil, fmt.Errorf("TOCSIN_SECRETS_KEY is not set (e.g. `openssl rand -base64 32`)")
		}
		key = secrets.DevKey
	}
	box, err := secrets.New(key)
	if err != nil {
		return nil, fmt.Errorf("secrets box: %w", err)
	}
	return box, nil
}

// New builds the parts of an App that come from cfg alone: the secrets box,
// the outbound URL policy, the payload codec, the metrics registry and the
// waker of the workflow starter. It connects nothing: Open connects the App
// to the configured services; a test or a benchmark sets DB, Objects and
// Temporal to its own (dialing Temporal with DialTemporal).
func New(cfg config.Config, logger *slog.Logger) (*App, error) {
	box, err := NewSecretsBox(cfg)
	if err != nil {
		return nil, err
	}
	outbound, err := hooks.NewPolicy(cfg.HookAllowHosts, cfg.HookAllowHTTP)
	if err != nil {
		return nil, err
	}
	codec, err := payloadcrypt.New(cfg.PayloadKeys, cfg.PayloadKeyID)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &App{Config: cfg, Logger: logger, Secrets: box, Outbound: outbound, Codec: codec, Metrics: reg, Starts: dispatch.NewWaker()}, nil
}

// Open builds the App (New) and connects it to PostgreSQL, MinIO and
// Temporal.
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger) (*App, error) {
	a, err := New(cfg, logger)
	if err != nil {
		return nil, err
	}
	if a.DB, err = storage.Open(ctx, cfg.DatabaseURL, cfg.DBMaxOpenConns); err != nil {
		return nil, err
	}
	a.Objects, err = storage.OpenObjects(ctx, storage.ObjectsConfig{
		Endpoint: cfg.MinIOEndpoint, AccessKey: cfg.MinIOAccessKey, SecretKey: cfg.MinIOSecretKey,
		Bucket: cfg.MinIOBucket, Secure: cfg.MinIOSecure,
	})
	if err != nil {
		_ = a.DB.Close()
		return nil, err
	}
	if a.Temporal, err = a.DialTemporal(ctx); err != nil {
		_ = a.DB.Close()
		return nil, err
	}
	return a, nil
}

// DialTemporal connects a Temporal client to the configured address and
// namespace, encrypting payloads with the App's codec and counting in its
// metrics.
func (a *App) DialTemporal(ctx context.Context) (client.Client, error) {
	return worker.Dial(ctx, worker.DialConfig{Address: a.Config.TemporalAddress, Namespace: a.Config.TemporalNamespace, Codec: a.Codec}, a.Logger, a.Metrics)
}

// Close releases the connections.
func (a *App) Close() {
	a.Temporal.Close()
	_ = a.DB.Close()
}

// Server builds the HTTP API.
func (a *App) Server(ctx context.Context) (*api.Server, error) {
	v, err := auth.NewVerifier(ctx, auth.VerifierConfig{
		Secret: a.Config.JWTSecret, JWKSURL: a.Config.JWKSURL, Issuer: a.Config.JWTIssuer, Audience: a.Config.JWTAudience,
	})
	if err != nil {
		return nil, err
	}
	return api.New(rest.Deps{
		Config: a.Config, Secrets: a.Secrets, Outbound: a.Outbound, Codec: a.Codec, DB: a.DB, Objects: a.Objects, Temporal: a.Temporal, Logger: a.Logger, Starts: a.Starts,
	}, v, a.Metrics), nil
}

// activitiesOn builds activities with senders of their own that use db and
// hold tenants' provider rates in limiters, delivering hook events with
// hookSender.
func (a *App) activitiesOn(db *storage.DB, limiters *ratelimit.Limiters, hookSender *activities.HookSender) *activities.Activities {
	senders := Senders(a.Config, a.Logger)
	reg := a.channelProviders(db)
	reg.Limiters = limiters
	for ch, s := range reg.Senders() {
		senders[ch] = s
	}
	return &activities.Activities{Config: a.Config, DB: db, Objects: a.Objects, Logger: a.Logger, Senders: senders, Destinations: reg,
		Hooks: hookSender, Metrics: a.Metrics}
}

// StartWorker runs the worker's two lanes (worker.Start) on the configured
// task queue with the configured slots unless o sets others, each lane with
// activities, senders and database connections of its own (rate limits and
// caches are shared), beside them the hook dispatcher and the workflow
// starter, and returns what stops them all.
func (a *App) StartWorker(o worker.Options) (stop func(), err error) {
	o.TaskQueue = a.Config.TemporalTaskQueue
	if o.MaxActivities == 0 {
		o.MaxActivities = a.Config.WorkerMaxActivities
	}
	if o.UrgentActivities == 0 {
		o.UrgentActivities = a.Config.WorkerUrgentActivities
	}
	// Each lane has database connections of its own, apart from the
	// app's (the API's, when `tocsin dev` serves both): the urgent lane's
	// steps never queue for one behind a big alert's batches, and neither
	// do the API's requests.
	normalDB, err := storage.Open(context.Background(), a.DB.URL, a.Config.DBMaxOpenConns)
	if err != nil {
		return nil, err
	}
	urgentDB, err := storage.Open(context.Background(), a.DB.URL, a.Config.WorkerUrgentDBConns)
	if err != nil {
		_ = normalDB.Close()
		return nil, err
	}
	closeDBs := func() { _, _ = normalDB.Close(), urgentDB.Close() }
	// The lanes hold a tenant to its rates together: the email and text
	// limits through shared activity state, the providers' ratePerSecond
	// through shared token buckets. They share the hook sender's client.
	limiters := new(ratelimit.Limiters)
	hookSender := activities.NewHookSender(a.Outbound, a.Config.HookTimeout, a.Secrets, a.Metrics)
	acts, urgent := a.activitiesOn(normalDB, limiters, hookSender), a.activitiesOn(urgentDB, limiters, hookSender)
	activities.ShareState(urgent, acts)
	stopLanes, err := worker.Start(a.Temporal, o, acts, urgent)
	if err != nil {
		closeDBs()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.SealHookHeaders(ctx) })
	wg.Go(func() { a.HookDispatcher().Run(ctx) })
	// The starter runs next to the worker and shares its client, so the
	// first task of a workflow it starts can be handed to this worker
	// without a trip through the task queue (eager start).
	wg.Go(func() { a.Starter(true).Run(ctx) })
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			stopLanes()
			closeDBs()
		})
	}, nil
}

// SealHookHeaders seals the custom headers of hook subscriptions stored in
// plain text by versions before headers were sealed, and logs how many it
// sealed or why it could not. The worker does it at its start; until then
// such headers are still read, delivered and answered masked.
func (a *App) SealHookHeaders(ctx context.Context) {
	n, err := hooks.SealStoredHeaders(ctx, hooksubs.New(a.DB), a.Secrets)
	if err != nil {
		a.Logger.Error("sealing hook subscriptions' plain headers", "sealed", n, "err", err)
		return
	}
	if n > 0 {
		a.Logger.Info("sealed hook subscriptions' plain headers", "subscriptions", n)
	}
}

// HookDispatcher builds the dispatcher that turns the events outbox into
// hook deliveries.
func (a *App) HookDispatcher() *dispatch.Dispatcher {
	return &dispatch.Dispatcher{
		DB: a.DB, Temporal: a.Temporal, TaskQueue: a.Config.TemporalTaskQueue,
		Retries: a.Config.HookRetrySchedule, Interval: a.Config.HookDispatchInterval, Logger: a.Logger,
	}
}

// Starter builds the dispatcher that starts the workflows of the start
// outbox. eager asks Temporal to hand first workflow tasks straight to the
// worker of this process's client, when it runs one on the task queue.
func (a *App) Starter(eager bool) *dispatch.Starter {
	return &dispatch.Starter{
		DB: a.DB, Temporal: a.Temporal, TaskQueue: a.Config.TemporalTaskQueue, ListenURL: a.DB.URL,
		Wake: a.Starts, Interval: a.Config.StartPollInterval, Eager: eager, Logger: a.Logger,
	}
}

// Senders builds the channel providers the configuration describes. A
// provider whose settings are unusable is left out (its channel then fails
// with channels.ErrNoProvider) and the problem is logged.
func Senders(cfg config.Config, logger *slog.Logger) channels.Senders {
	s := channels.Senders{}
	if snd, err := email.New(email.Config{
		Addr: cfg.SMTPAddr, Username: cfg.SMTPUsername, Password: cfg.SMTPPassword, From: cfg.SMTPFrom, TLS: cfg.SMTPTLS,
		Connections: cfg.SMTPConnections,
	}); err != nil {
		logger.Error("email channel disabled", "err", err)
	} else {
		s[channels.Email] = snd
	}
	if snd, err := sms.New(sms.Config{URL: cfg.SMSURL, Token: cfg.SMSToken, Concurrency: cfg.ProviderConcurrency}); err != nil {
		logger.Error("text channel disabled", "err", err)
	} else {
		s[channels.Text] = snd
	}
	return s
}

// channelProviders returns a registry of the tenants' channel providers
// (voice, ETN, push, app, fax, EAS, mobile broadcast, team chat, social,
// neighborhood) over db.
func (a *App) channelProviders(db *storage.DB) *providers.Registry {
	return &providers.Registry{
		Store: &providers.Store{DB: db, Box: a.Secrets, Guard: a.Outbound}, DB: db, Objects: a.Objects,
		PublicURL: a.Config.PublicURL, Concurrency: a.Config.ProviderConcurrency, Timeout: a.Config.ProviderTimeout, Guard: a.Outbound,
	}
}

// Serve runs the HTTP API on addr until ctx ends.
func (a *App) Serve(ctx context.Context, addr string) error {
	s, err := a.Server(ctx)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.App.Listen(addr) }()
	a.Logger.Info("api listening", "addr", addr)
	select {
	case err := <-errc:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	return s.App.ShutdownWithTimeout(10 * time.Second)
}

// Work runs the Temporal worker until ctx ends, and serves its metrics on
// metricsAddr when that is not empty.
func (a *App) Work(ctx context.Context, metricsAddr string) error {
	if metricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(a.Metrics, promhttp.HandlerOpts{}))
		srv := &http.Server{Addr: metricsAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.Logger.Error("worker metrics server", "err", err)
			}
		}()
		defer func() { _ = srv.Close() }()
		a.Logger.Info("worker metrics listening", "addr", metricsAddr)
	}
	stopWorker, err := a.StartWorker(worker.Options{})
	if err != nil {
		return err
	}
	defer stopWorker()
	a.Logger.Info("worker started", "task_queue", a.Config.TemporalTaskQueue, "urgent_task_queue", workflows.UrgentQueue(a.Config.TemporalTaskQueue))
	if err := dispatch.EnsureSchedules(ctx, a.Temporal, a.Config.TemporalTaskQueue); err != nil {
		a.Logger.Error("maintenance schedules", "err", err)
	}
	<-ctx.Done()
	return nil
}
