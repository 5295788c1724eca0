// Package stacktest runs tocsin for integration tests against the real
// PostgreSQL, Temporal dev server and MinIO that `make test` starts. Each test
// gets its own PostgreSQL database (a copy of a template migrated once), MinIO
// bucket, Temporal task queue and tenant ids, so tests run in parallel and
// leave nothing behind. Tests of a package that need no configuration of their
// own share one stack (Shared, with Main in the package's TestMain). A test
// that needs the API to die runs it in a process of its own
// (StartAPIProcess) and kills it.
package stacktest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/worker"
)

// Addresses of the services `make test` starts; TOCSIN_TEST_* variables override them.
var (
	DatabaseURL     = envOr("TOCSIN_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tocsin_test?sslmode=disable")
	TemporalAddress = envOr("TOCSIN_TEST_TEMPORAL_ADDRESS", "127.0.0.1:17233")
	MinIOEndpoint   = envOr("TOCSIN_TEST_MINIO_ENDPOINT", "127.0.0.1:19000")
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Suffix returns a random lower-case hex string for unique names.
func Suffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewTenant returns a fresh numeric tenant id, so workflow ids and rows of
// parallel tests never meet.
func NewTenant() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000_000))
	return fmt.Sprint(n.Int64() + 1_000_000_000)
}

func needServices(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs PostgreSQL, Temporal and MinIO (run make test)")
	}
}

// Objects returns an object store on a bucket of its own, emptied and removed
// when the test ends.
func Objects(t testing.TB) *storage.Objects {
	t.Helper()
	needServices(t)
	o, remove, err := newObjects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return o
}

// newObjects opens an object store on a new bucket and returns it with the
// function that empties and removes the bucket.
func newObjects(ctx context.Context) (*storage.Objects, func(), error) {
	o, err := storage.OpenObjects(ctx, storage.ObjectsConfig{
		Endpoint: MinIOEndpoint, AccessKey: "minioadmin", SecretKey: "minioadmin", Bucket: "t-" + Suffix(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("test object store: %w (run make test, which starts MinIO)", err)
	}
	return o, func() {
		ctx := context.Background()
		for obj := range o.Client.ListObjects(ctx, o.Bucket, minio.ListObjectsOptions{Recursive: true}) {
			if obj.Err == nil {
				_ = o.Client.RemoveObject(ctx, o.Bucket, obj.Key, minio.RemoveObjectOptions{})
			}
		}
		_ = o.Client.RemoveBucket(ctx, o.Bucket)
	}, nil
}

// Stack is a running tocsin: the HTTP API on a loopback port and a worker on
// a task queue of its own.
type Stack struct {
	URL      string
	Config   config.Config
	App      *app.App
	DB       *storage.DB
	Objects  *storage.Objects
	Temporal client.Client
	Metrics  *prometheus.Registry
	// Sandbox receives the stack's email and texts, unless the test
	// pointed them elsewhere (Sandbox, the function).
	Sandbox *sandbox.Sandbox
}

// Start runs tocsin for the test: the API, and a worker with the outbox
// dispatchers as `tocsin worker` runs them. configure, when given, changes
// the configuration before anything starts (providers' URLs, feature
// switches). Tests that need no configuration of their own and leave the
// stack as they found it share one stack per package with Shared.
func Start(t testing.TB, configure ...func(*config.Config)) *Stack {
	t.Helper()
	s := StartAPI(t, configure...)
	s.StartWorker(t, WorkerOptions{})
	return s
}

// StartAPI runs only tocsin's API: what it accepts waits in the outboxes
// until StartWorker (or StartStarter) runs.
func StartAPI(t testing.TB, configure ...func(*config.Config)) *Stack {
	t.Helper()
	needServices(t)
	s, err := launchAPI(t.Cleanup, testWriter{t}, configure...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launchAPI starts a stack's API, registering with cleanup what stops it
// (run last first). The stack's warnings and errors go to logs.
func launchAPI(cleanup func(func()), logs io.Writer, configure ...func(*config.Config)) (*Stack, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cleanup(cancel)

	cfg, err := config.Load()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cfg.Env = "development"
	cfg.JWTSecret = config.DevJWTSecret
	cfg.JWKSURL = ""
	cfg.TemporalAddress = TemporalAddress
	cfg.TemporalNamespace = "default"
	cfg.TemporalTaskQueue = "test-" + Suffix()
	cfg.MinIOEndpoint = MinIOEndpoint
	cfg.MinIOAccessKey, cfg.MinIOSecretKey = "minioadmin", "minioadmin"
	// Many stacks run at once against one PostgreSQL (100 connections by
	// default): each keeps a few, in its API's pool and each worker lane's.
	cfg.DBMaxOpenConns, cfg.WorkerUrgentDBConns = 4, 2
	// The API listens before anything is built, so that its address is the
	// public URL (what providers call back and links point at) unless the
	// test configures one of its own.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	cleanup(func() { _ = ln.Close() })
	cfg.PublicURL = "http://" + ln.Addr().String()
	// Email and texts go to a sandbox of the stack's own unless the test
	// configures its own: never to the defaults, where nothing (or another
	// process's sandbox) listens.
	sb, withSandbox, err := startSandbox()
	if err != nil {
		return nil, err
	}
	cleanup(func() { _ = sb.Close() })
	withSandbox(&cfg)
	for _, f := range configure {
		f(&cfg)
	}

	db, drop, err := newDatabase(ctx)
	if err != nil {
		return nil, fmt.Errorf("test database: %w", err)
	}
	cleanup(func() { _ = db.Close(); drop() })
	objects, remove, err := newObjects(ctx)
	if err != nil {
		return nil, err
	}
	cleanup(remove)
	cfg.MinIOBucket = objects.Bucket
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(cfg, logger)
	if err != nil {
		return nil, err
	}
	tc, err := a.DialTemporal(ctx)
	if err != nil {
		return nil, fmt.Errorf("temporal: %w (run make test, which starts the Temporal dev server)", err)
	}
	cleanup(tc.Close)
	a.DB, a.Objects, a.Temporal = db, objects, tc
	srv, err := a.Server(ctx)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	go func() { _ = srv.App.Listener(ln) }()
	cleanup(func() { _ = srv.App.ShutdownWithTimeout(5 * time.Second) })

	s := &Stack{URL: "http://" + ln.Addr().String(), Config: cfg, App: a, DB: db, Objects: objects, Temporal: tc, Metrics: a.Metrics, Sandbox: sb}
	return s, nil
}

// WorkerOptions tune StartWorker.
type WorkerOptions struct {
	// OneWorkflowTaskAtATime has the worker ask the task queue for one
	// workflow task at a time, so the order in which it receives them
	// shows: two slots and two pollers, the fewest the SDK allows, of which
	// the SDK keeps one on the worker's own sticky queue.
	OneWorkflowTaskAtATime bool
}

// StartWorker runs a worker on the stack's task queue with the hook
// dispatcher and the workflow starter, as `tocsin worker` does. The
// returned function stops them; so does the end of the test.
func (s *Stack) StartWorker(t testing.TB, o WorkerOptions) (stop func()) {
	t.Helper()
	stop, err := s.startWorker(t.Cleanup, o)
	if err != nil {
		t.Fatal(err)
	}
	return stop
}

// startWorker starts the worker, the hook dispatcher and the workflow
// starter, registering with cleanup what stops them.
func (s *Stack) startWorker(cleanup func(func()), o WorkerOptions) (stop func(), err error) {
	a, cfg := s.App, s.Config
	var wo worker.Options
	if o.OneWorkflowTaskAtATime {
		wo.WorkflowTaskPollers, wo.MaxWorkflowTasks = 2, 2
	}
	stop, err = a.StartWorker(wo)
	if err != nil {
		return nil, err
	}
	if err := dispatch.EnsureSchedules(context.Background(), s.Temporal, cfg.TemporalTaskQueue); err != nil {
		stop()
		return nil, fmt.Errorf("maintenance schedules: %w", err)
	}
	cleanup(func() {
		for _, id := range dispatch.ScheduleIDs(cfg.TemporalTaskQueue) {
			_ = s.Temporal.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background())
		}
	})
	cleanup(stop)
	return stop, nil
}

// StartStarter runs only the workflow starter, as a process without a
// worker would: workflows are started and wait for a worker. The returned
// function stops it; so does the end of the test.
func (s *Stack) StartStarter(t testing.TB) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.App.Starter(false).Run(ctx)
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Token mints a bearer token for tenant with the given scopes (every scope when none).
func (s *Stack) Token(t testing.TB, tenant string, scopes ...string) string {
	t.Helper()
	if len(scopes) == 0 {
		scopes = auth.AllScopes
	}
	tok, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: "test-user", Tenant: tenant, Scopes: scopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// NewTenant returns a fresh tenant id (the package's NewTenant) and a token
// for it with every scope, what an API test starts with.
func (s *Stack) NewTenant(t testing.TB) (tenant, token string) {
	t.Helper()
	tenant = NewTenant()
	return tenant, s.Token(t, tenant)
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test when it cannot.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Create POSTs body to path and fails the test unless the answer is 201
// Created.
func (s *Stack) Create(t testing.TB, path, token string, body any, headers ...string) Response {
	t.Helper()
	r := s.Do(t, http.MethodPost, path, token, body, headers...)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	return r
}

// Do sends a request to the stack. body may be nil, a []byte, an io.Reader or
// a value encoded as JSON. headers are name, value pairs; a token is sent as
// a bearer token when not empty.
func (s *Stack) Do(t testing.TB, method, path, token string, body any, headers ...string) Response {
	t.Helper()
	var r io.Reader
	contentType := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
		contentType = "application/json"
	case io.Reader:
		r = b
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(enc)
		contentType = "application/json"
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Sandbox starts a loopback SMTP server and text-message endpoint for the
// test, stopped when it ends, and returns it with a configure function for
// Start that points TOCSIN_SMTP_ADDR and TOCSIN_SMS_URL (and the SMS token)
// at it.
func Sandbox(t testing.TB) (*sandbox.Sandbox, func(*config.Config)) {
	t.Helper()
	sb, configure, err := startSandbox()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb, configure
}

// startSandbox starts a loopback SMTP server and text-message endpoint and
// returns them with the configure function that points a stack at them.
func startSandbox() (*sandbox.Sandbox, func(*config.Config), error) {
	token := "sandbox-" + Suffix()
	sb, err := sandbox.Start(sandbox.Config{SMTPAddr: "127.0.0.1:0", SMSURL: "http://127.0.0.1:0/messages", SMSToken: token})
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return sb, func(c *config.Config) {
		c.SMTPAddr = sb.SMTP.Addr()
		c.SMTPUsername, c.SMTPPassword, c.SMTPTLS = "", "", "none"
		c.SMSURL = sb.SMS.URL()
		c.SMSToken = token
	}, nil
}

// Eventually polls cond every 50ms until it is true or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
}
