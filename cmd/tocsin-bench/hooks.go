package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	tclient "go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/benchdata"
)

// hooksOptions are the sizes of a hooks run.
type hooksOptions struct {
	services
	events, subscriptions, batch int
	concurrency                  []int
	rtt, timeout                 time.Duration
}

// HooksResult is what a hooks run measured.
type HooksResult struct {
	Command       string      `json:"command"`
	StartedAt     time.Time   `json:"startedAt"`
	CPUs          int         `json:"cpus"`
	LoadBefore    string      `json:"loadAverageBefore"`
	LoadAfter     string      `json:"loadAverageAfter"`
	Events        int         `json:"events"`
	Subscriptions int         `json:"subscriptions"`
	Batch         int         `json:"batch"`
	AddedRTTMs    float64     `json:"addedRoundTripMs"`
	Rounds        []HookRound `json:"rounds"`
}

// HookRound is one flood of events: dispatched with no worker running,
// with at most Concurrency starts in flight, then delivered by a worker to
// the loopback hook target.
type HookRound struct {
	Concurrency        int     `json:"concurrency"`
	Starts             int     `json:"starts"`
	Batches            int     `json:"batches"`
	DispatchSeconds    float64 `json:"dispatchSeconds"`
	EventsPerSec       float64 `json:"eventsPerSecond"`
	StartsPerSec       float64 `json:"startsPerSecond"`
	BatchSeconds       float64 `json:"meanBatchSeconds"`
	OtherTenantSeconds float64 `json:"otherTenantDispatchedSeconds"`
	Delivered          int64   `json:"delivered"`
	Repeated           int64   `json:"repeated"`
	DeliverSeconds     float64 `json:"deliverSeconds"`
	DeliveriesPerSec   float64 `json:"deliveriesPerSecond"`
}

func runHooks(args []string) error {
	o := hooksOptions{}
	fs := flag.NewFlagSet("hooks", flag.ContinueOnError)
	o.flags(fs, "the tocsin binary, run as the worker process that delivers", "folder for the JSON and Markdown results")
	fs.IntVar(&o.events, "events", 500, "events of the flooding tenant")
	fs.IntVar(&o.subscriptions, "subscriptions", 10, "the flooding tenant's subscriptions to every event (at most hooksubs.MaxPerTenant, 100)")
	fs.IntVar(&o.batch, "batch", 100, "deliveries (workflow starts) one claim of the dispatcher asks for: events are claimed until their subscriptions reach it (at least one event)")
	conc := fs.String("concurrency", "1,16", "a round for each of these limits of the dispatcher's starts in flight (1 starts one at a time)")
	fs.DurationVar(&o.rtt, "rtt", 0, "added to each start's round trip, as a Temporal server across a network adds it to the loopback dev server's")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-concurrency: %q is not a positive number", f)
		}
		o.concurrency = append(o.concurrency, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	res := &HooksResult{Command: "hooks", StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU(), LoadBefore: loadAverage(),
		Events: o.events, Subscriptions: o.subscriptions, Batch: o.batch, AddedRTTMs: float64(o.rtt.Microseconds()) / 1000}

	target, err := startHookTarget()
	if err != nil {
		return err
	}
	defer target.close()
	db, schema, _, done, err := migratedSchema(ctx, o.dbURL, false, 10)
	if err != nil {
		return err
	}
	defer done()
	queue := "bench-hooks-" + randomSuffix()
	a, err := benchApp(ctx, o.temporal, o.minio, queue, db, func(c *config.Config) {
		c.HookAllowHTTP, c.HookAllowHosts = true, []string{"127.0.0.1"}
	})
	if err != nil {
		return err
	}
	defer a.Temporal.Close()
	defer func() {
		for _, id := range dispatch.ScheduleIDs(queue) {
			_ = a.Temporal.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background())
		}
	}()
	base, stopAPI, err := serveAPI(ctx, a)
	if err != nil {
		return err
	}
	defer stopAPI()

	// The flooding tenant's subscriptions and another tenant's one, made
	// through the API.
	seed := time.Now().UnixNano()%1_000_000_000 + 1_000_000_000
	flood, other := strconv.FormatInt(seed, 10), strconv.FormatInt(seed+1, 10)
	for _, s := range []struct {
		tenant string
		n      int
	}{{flood, o.subscriptions}, {other, 1}} {
		tok, err := auth.Mint(a.Config.JWTSecret, auth.Principal{Subject: "bench", Tenant: s.tenant, Scopes: auth.AllScopes}, time.Hour)
		if err != nil {
			return err
		}
		api := &client{base: base, token: tok, http: &http.Client{Timeout: 30 * time.Second}}
		for i := range s.n {
			var out struct{}
			if err := api.do(ctx, http.MethodPost, "/v2/settings/subscriptions", map[string]any{
				"url": fmt.Sprintf("%s/%s/%d", target.url, s.tenant, i), "eventTypes": []string{storage.EventAlertSent},
			}, &out); err != nil {
				return err
			}
		}
	}
	logf("%d subscriptions of the flooding tenant and 1 of another, to %s (schema %s)", o.subscriptions, target.url, schema)

	for _, c := range o.concurrency {
		d := &dispatch.Dispatcher{DB: db, Temporal: remoteStarts{a.Temporal, o.rtt}, TaskQueue: queue, Batch: o.batch, Concurrency: c, Logger: a.Logger}
		r, err := hookRound(ctx, o, db, d, a.Temporal, target, flood, other, queue, logf)
		if err != nil {
			return err
		}
		res.Rounds = append(res.Rounds, r)
	}
	res.LoadAfter = loadAverage()
	return writeHooksResult(o.out, res)
}

// hookRound emits o.events events of the flooding tenant, then one of the
// other tenant, dispatches them all with d while no worker runs, then
// starts a worker process and waits for every delivery to reach the
// target and for its workflow, which tc shows, to end.
func hookRound(ctx context.Context, o hooksOptions, db *storage.DB, d *dispatch.Dispatcher, tc tclient.Client, target *hookTarget,
	flood, other, queue string, logf func(string, ...any)) (HookRound, error) {
	r := HookRound{Concurrency: d.Concurrency}
	target.reset()
	for i := range o.events {
		if _, err := storage.EmitEvent(ctx, db, flood, storage.EventAlertSent, map[string]any{"alertId": i + 1, "status": "Sent"}); err != nil {
			return r, err
		}
	}
	if _, err := storage.EmitEvent(ctx, db, other, storage.EventAlertSent, map[string]any{"alertId": 1, "status": "Sent"}); err != nil {
		return r, err
	}
	r.Starts = o.events*o.subscriptions + 1
	start := time.Now()
	for {
		n, err := d.DispatchOnce(ctx)
		if err != nil {
			return r, fmt.Errorf("dispatch: %w", err)
		}
		if n == 0 {
			break
		}
		r.Batches++
		if r.OtherTenantSeconds == 0 {
			waiting, err := benchdata.UndispatchedEvents(ctx, db, other)
			if err != nil {
				return r, err
			}
			if waiting == 0 {
				r.OtherTenantSeconds = time.Since(start).Seconds()
			}
		}
	}
	r.DispatchSeconds = time.Since(start).Seconds()
	r.EventsPerSec = float64(o.events+1) / r.DispatchSeconds
	r.StartsPerSec = float64(r.Starts) / r.DispatchSeconds
	r.BatchSeconds = r.DispatchSeconds / float64(max(r.Batches, 1))
	logf("concurrency %d: dispatched %d events (%d starts) in %d batches, %.2f s: %.0f events/s, %.0f starts/s; the other tenant's event after %.2f s",
		d.Concurrency, o.events+1, r.Starts, r.Batches, r.DispatchSeconds, r.EventsPerSec, r.StartsPerSec, r.OtherTenantSeconds)

	w, err := o.start("hooks-worker", o.env(db.URL, queue, "bench", "TOCSIN_HOOK_ALLOW_HTTP=true", "TOCSIN_HOOK_ALLOW_HOSTS=127.0.0.1",
		"TOCSIN_WORKER_METRICS_ADDR=127.0.0.1:0", "TOCSIN_LOG_LEVEL="+envOr("TOCSIN_BENCH_WORKER_LOG_LEVEL", "warn")), "worker")
	if err != nil {
		return r, err
	}
	defer w.stop()
	for target.delivered.Load() < int64(r.Starts) {
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return r, fmt.Errorf("%d of %d deliveries arrived: %w (worker log %s)", target.delivered.Load(), r.Starts, err, o.logPath("hooks-worker"))
		}
	}
	first, last := target.span()
	r.Delivered, r.Repeated = target.delivered.Load(), target.repeated.Load()
	r.DeliverSeconds = last.Sub(first).Seconds()
	if r.DeliverSeconds > 0 {
		r.DeliveriesPerSec = float64(r.Delivered) / r.DeliverSeconds
	}
	logf("delivered %d (%d repeated) in %.2f s from the first to the last: %.0f/s", r.Delivered, r.Repeated, r.DeliverSeconds, r.DeliveriesPerSec)
	// A delivery records its attempt after the POST: the worker stops once
	// every delivery's workflow has ended.
	running := &workflowservice.CountWorkflowExecutionsRequest{Query: fmt.Sprintf("TaskQueue = '%s' AND ExecutionStatus = 'Running'", queue)}
	for {
		n, err := tc.CountWorkflow(ctx, running)
		if err != nil {
			return r, fmt.Errorf("count running deliveries: %w", err)
		}
		if n.GetCount() == 0 {
			return r, nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return r, fmt.Errorf("%d deliveries still running: %w", n.GetCount(), err)
		}
	}
}

// remoteStarts is a Temporal client whose workflow starts take rtt longer,
// as they do against a server across a network.
type remoteStarts struct {
	tclient.Client
	rtt time.Duration
}

func (c remoteStarts) ExecuteWorkflow(ctx context.Context, o tclient.StartWorkflowOptions, workflow any, args ...any) (tclient.WorkflowRun, error) {
	if err := sleep(ctx, c.rtt); err != nil {
		return nil, err
	}
	return c.Client.ExecuteWorkflow(ctx, o, workflow, args...)
}

// hookTarget is the loopback hook target: it answers 204 to every
// delivery and counts them by subscription (the path) and event (the
// webhook-id header).
type hookTarget struct {
	url       string
	srv       *http.Server
	mu        sync.Mutex
	seen      map[string]bool
	first     time.Time
	last      time.Time
	delivered atomic.Int64
	repeated  atomic.Int64
}

func startHookTarget() (*hookTarget, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &hookTarget{url: "http://" + ln.Addr().String() + "/hooks", seen: map[string]bool{}}
	t.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path + " " + r.Header.Get(hooks.HeaderID)
		now := time.Now()
		t.mu.Lock()
		dup := t.seen[key]
		t.seen[key] = true
		if t.first.IsZero() {
			t.first = now
		}
		t.last = now
		t.mu.Unlock()
		if dup {
			t.repeated.Add(1)
		} else {
			t.delivered.Add(1)
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = t.srv.Serve(ln) }()
	return t, nil
}

// reset forgets what arrived.
func (t *hookTarget) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen, t.first, t.last = map[string]bool{}, time.Time{}, time.Time{}
	t.delivered.Store(0)
	t.repeated.Store(0)
}

// span is when the first and the last delivery arrived.
func (t *hookTarget) span() (first, last time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first, t.last
}

func (t *hookTarget) close() { _ = t.srv.Close() }

func writeHooksResult(dir string, r *HooksResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stamp := r.StartedAt.Format("20060102-150405")
	b, _ := json.MarshalIndent(r, "", "  ")
	jsonPath := filepath.Join(dir, "hooks-"+stamp+".json")
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# tocsin-bench hooks (%s)\n\n", r.StartedAt.Format(time.RFC3339))
	fmt.Fprintf(&md, "%d CPUs; load average %s before, %s after.\n\n", r.CPUs, r.LoadBefore, r.LoadAfter)
	fmt.Fprintf(&md, "%d events of one tenant, each to its %d subscriptions, then 1 event of another tenant (1 subscription); "+
		"dispatched with no worker running (claims of at most %d deliveries, %.0f ms added to each start's round trip), then delivered by a worker process to a loopback target.\n\n",
		r.Events, r.Subscriptions, r.Batch, r.AddedRTTMs)
	fmt.Fprintf(&md, "| starts in flight | starts | dispatch | events/s | starts/s | mean claim | other tenant's event dispatched after | delivered (repeated) | deliveries/s |\n")
	fmt.Fprintf(&md, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, x := range r.Rounds {
		fmt.Fprintf(&md, "| %d | %d | %.2f s | %.0f | %.0f | %.2f s | %.2f s | %d (%d) | %.0f |\n", x.Concurrency,
			x.Starts, x.DispatchSeconds, x.EventsPerSec, x.StartsPerSec, x.BatchSeconds, x.OtherTenantSeconds, x.Delivered, x.Repeated, x.DeliveriesPerSec)
	}
	mdPath := filepath.Join(dir, "hooks-"+stamp+".md")
	if err := os.WriteFile(mdPath, []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Println(md.String())
	fmt.Printf("written %s and %s\n", jsonPath, mdPath)
	return nil
}
