package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/enums/v1"
	tclient "go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/benchdata"
	"github.com/tocsin/tocsin/worker"
)

// loadOptions are the sizes of a load run; BENCH_LOAD_QUICK=1 makes them
// small enough for a smoke run, and each can be set on its own.
type loadOptions struct {
	quick         bool
	burst         int
	clients       int
	rates         []int
	rateFor       time.Duration
	healthFor     time.Duration
	drain         time.Duration
	big           int
	flood         int
	emergency     int
	verifications int
	timeout       time.Duration
	services
}

// Latency is a latency distribution in milliseconds.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50Ms"`
	P99 float64 `json:"p99Ms"`
	Max float64 `json:"maxMs"`
}

func latencyOf(ms []float64) Latency {
	if len(ms) == 0 {
		return Latency{}
	}
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	return Latency{N: len(s), P50: percentile(s, 0.50), P99: percentile(s, 0.99), Max: s[len(s)-1]}
}

func (l Latency) String() string {
	if l.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%s / %s", fmtMs(l.P50), fmtMs(l.P99))
}

func fmtMs(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// BurstResult is part 1 (and the shape of part 4).
type BurstResult struct {
	Alerts        int     `json:"alerts"`
	Clients       int     `json:"clients"`
	Errors        int     `json:"errors"`
	Retried       int     `json:"retried"`
	NotFinal      int     `json:"notFinal"`
	Seconds       float64 `json:"seconds"`
	FinalPerSec   float64 `json:"finalPerSecond"`
	Accept        Latency `json:"accept"`
	AcceptToFinal Latency `json:"acceptToFinal"`
}

// RateResult is one rate of part 2.
type RateResult struct {
	Rate          int     `json:"ratePerSecond"`
	Seconds       float64 `json:"seconds"`
	Sent          int     `json:"sent"`
	Errors        int     `json:"errors"`
	ErrorSample   string  `json:"errorSample,omitempty"`
	NotFinal      int     `json:"notFinal"`
	Accept        Latency `json:"accept"`
	AcceptToFinal Latency `json:"acceptToFinal"`
	Health        Latency `json:"healthz"`
	HealthErrors  int     `json:"healthzErrors"`
}

// PriorityResult is part 3.
type PriorityResult struct {
	BigRecipients       int     `json:"bigRecipients"`
	BigAcceptToFinalSec float64 `json:"bigAcceptToFinalSeconds"`
	Flood               int     `json:"flood"`
	FloodErrors         int     `json:"floodErrors"`
	FloodFinalSec       float64 `json:"floodAllFinalSeconds"`
	Emergency           Latency `json:"emergencyAcceptToFinal"`
	EmergencyErrors     int     `json:"emergencyErrors"`
	EmergencyNotFinal   int     `json:"emergencyNotFinal"`
	Codes               Latency `json:"verificationCodeArrival"`
	CodeErrors          int     `json:"verificationErrors"`
	CodesMissing        int     `json:"verificationCodesMissing"`
}

// HistoryCount is what one single-recipient alert cost Temporal: its
// SendAlert workflow's tasks, activities and children (with those of its
// children).
type HistoryCount struct {
	WorkflowTasks   int `json:"workflowTasks"`
	Activities      int `json:"activities"`
	LocalActivities int `json:"localActivities"`
	Children        int `json:"children"`
	Events          int `json:"events"`
}

// LoadResult is what a load run measured.
type LoadResult struct {
	Command     string         `json:"command"`
	Quick       bool           `json:"quick"`
	StartedAt   time.Time      `json:"startedAt"`
	CPUs        int            `json:"cpus"`
	LoadBefore  string         `json:"loadAverageBefore"`
	LoadAfter   string         `json:"loadAverageAfter"`
	Burst       BurstResult    `json:"burst"`
	Rates       []RateResult   `json:"openLoop"`
	Priority    PriorityResult `json:"priority"`
	Empty       BurstResult    `json:"emptyWorkflows"`
	OneAlert    HistoryCount   `json:"oneAlertHistory"`
	RatioOfFlow float64        `json:"burstRatioOfEmptyWorkflows"`
}

func loadDefaults() loadOptions {
	quick := os.Getenv("BENCH_LOAD_QUICK") == "1"
	o := loadOptions{quick: quick, burst: 1000, clients: 16, rates: []int{50, 100, 200}, rateFor: 30 * time.Second,
		healthFor: 10 * time.Second, drain: 120 * time.Second, big: 100000, flood: 2000, emergency: 20, verifications: 20}
	if quick {
		o.burst, o.rateFor, o.healthFor, o.drain, o.big, o.flood, o.emergency, o.verifications =
			200, 5*time.Second, 3*time.Second, 60*time.Second, 10000, 300, 10, 10
	}
	o.burst = envInt("BENCH_LOAD_BURST", o.burst)
	o.clients = envInt("BENCH_LOAD_CLIENTS", o.clients)
	if v := os.Getenv("BENCH_LOAD_RATES"); v != "" {
		o.rates = nil
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				o.rates = append(o.rates, n)
			}
		}
	}
	o.rateFor = time.Duration(envInt("BENCH_LOAD_SECONDS", int(o.rateFor/time.Second))) * time.Second
	o.big = envInt("BENCH_LOAD_BIG", o.big)
	o.flood = envInt("BENCH_LOAD_FLOOD", o.flood)
	o.emergency = envInt("BENCH_LOAD_EMERGENCY", o.emergency)
	o.verifications = envInt("BENCH_LOAD_VERIFICATIONS", o.verifications)
	return o
}

// loadRun is the running system of a load run.
type loadRun struct {
	o      loadOptions
	db     *storage.DB
	lb     *loopback
	tc     tclient.Client
	base   string
	secret string
	http   *http.Client
	finals *finalWatch
	tmu    sync.Mutex
	tokens map[string]string
}

func runLoad(args []string) error {
	o := loadDefaults()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	o.flags(fs, "the tocsin binary, run as the worker process", "folder for the JSON and Markdown results")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Minute, "give up after this long")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: tocsin-bench load [flags]

Sizes come from the environment: BENCH_LOAD_QUICK=1 (small sizes for a smoke
run), BENCH_LOAD_BURST, BENCH_LOAD_CLIENTS, BENCH_LOAD_RATES (e.g. 50,100,200),
BENCH_LOAD_SECONDS (per rate), BENCH_LOAD_BIG, BENCH_LOAD_FLOOD,
BENCH_LOAD_EMERGENCY, BENCH_LOAD_VERIFICATIONS.`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	res := &LoadResult{Command: "load", Quick: o.quick, StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU(), LoadBefore: loadAverage()}
	r := &loadRun{o: o, tokens: map[string]string{}}
	logf("load before: %s", res.LoadBefore)

	lb, err := startLoopback()
	if err != nil {
		return err
	}
	defer lb.close()
	r.lb = lb

	db, schema, dsn, done, err := migratedSchema(ctx, o.dbURL, false, 10)
	if err != nil {
		return err
	}
	defer done()
	r.db = db

	// Tenants: a for the burst and the open loop, b for the big alert, c
	// for the flood, d for Emergency alerts and verification codes.
	base := time.Now().UnixNano()%1_000_000_000 + 1_000_000_000
	tenants := map[string]string{}
	contact := map[string]int64{}
	var bigGroup int64
	for i, name := range []string{"a", "b", "c", "d"} {
		t := strconv.FormatInt(base+int64(i), 10)
		tenants[name] = t
		n := 1
		if name == "b" {
			n = o.big
		}
		g, first, err := benchdata.SeedContacts(ctx, r.db, t, n)
		if err != nil {
			return err
		}
		contact[name] = first
		if name == "b" {
			bigGroup = g
		}
	}
	logf("seeded 4 tenants (%d contacts for the big alert) in schema %s", o.big, schema)

	queue := "bench-load-" + randomSuffix()
	w, err := o.start("load-worker", o.workerEnv(dsn, queue, lb.url), "worker")
	if err != nil {
		return err
	}
	defer func() { w.stop() }()

	apiDB, err := storage.Open(ctx, dsn, 20)
	if err != nil {
		return err
	}
	defer apiDB.Close()
	a, err := benchApp(ctx, o.temporal, o.minio, queue, apiDB)
	if err != nil {
		return err
	}
	r.tc = a.Temporal
	defer r.tc.Close()
	apiURL, stopAPI, err := serveAPI(ctx, a)
	if err != nil {
		return err
	}
	defer stopAPI()
	r.base, r.secret = apiURL, a.Config.JWTSecret
	r.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 0}}
	r.finals = newFinalWatch(r.db)
	go r.finals.run(ctx)

	// Warm up: a few alerts end to end, so the first figures do not
	// include connection set-up; the first one's history is counted.
	warm := time.Now()
	if _, err := r.alertsUntilFinal(ctx, tenants["a"], contact["a"], 3, 1); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	if ids := r.finals.since(warm); len(ids) > 0 {
		al, err := storage.GetAlert(ctx, r.db, tenants["a"], ids[0])
		if err != nil {
			return err
		}
		if res.OneAlert, err = r.history(ctx, al.WorkflowID); err != nil {
			return err
		}
		h := res.OneAlert
		logf("one single-recipient alert: workflow tasks %d, activities %d, local activities %d, child workflows %d (history events %d)",
			h.WorkflowTasks, h.Activities, h.LocalActivities, h.Children, h.Events)
	}

	logf("part 1: burst of %d single-recipient alerts from %d clients", o.burst, o.clients)
	if res.Burst, err = r.burst(ctx, tenants["a"], contact["a"]); err != nil {
		return err
	}
	logf("  %.1f alerts final/s; accept %s; accept to final %s; %d errors, %d not final", res.Burst.FinalPerSec,
		res.Burst.Accept, res.Burst.AcceptToFinal, res.Burst.Errors, res.Burst.NotFinal)

	for _, rate := range o.rates {
		logf("part 2: open loop at %d requests/s for %s", rate, o.rateFor)
		rr, err := r.openLoop(ctx, tenants["a"], contact["a"], rate)
		if err != nil {
			return err
		}
		logf("  accept %s, %d errors; accept to final %s, %d not final; healthz %s", rr.Accept, rr.Errors, rr.AcceptToFinal, rr.NotFinal, rr.Health)
		res.Rates = append(res.Rates, rr)
	}

	logf("part 3: %d Emergency alerts and %d verification codes while a %d-recipient alert runs and %d NonEmergency alerts flood in",
		o.emergency, o.verifications, o.big, o.flood)
	if res.Priority, err = r.priority(ctx, tenants, contact, bigGroup); err != nil {
		return err
	}
	p := res.Priority
	logf("  Emergency %s (%d not final); codes %s (%d missing); big alert final after %.1f s; flood final after %.1f s",
		p.Emergency, p.EmergencyNotFinal, p.Codes, p.CodesMissing, p.BigAcceptToFinalSec, p.FloodFinalSec)

	logf("part 4: %d empty workflows from %d clients on the same Temporal server", o.burst, o.clients)
	if res.Empty, err = r.emptyWorkflows(ctx); err != nil {
		return err
	}
	if res.Empty.FinalPerSec > 0 {
		res.RatioOfFlow = res.Burst.FinalPerSec / res.Empty.FinalPerSec
	}
	logf("  %.1f empty workflows/s; tocsin's burst is %.0f %% of it", res.Empty.FinalPerSec, 100*res.RatioOfFlow)
	res.LoadAfter = loadAverage()
	return writeLoadResult(o.out, res)
}

// token is a bearer token for a tenant, minted once.
func (r *loadRun) token(tenant string) (string, error) {
	r.tmu.Lock()
	defer r.tmu.Unlock()
	if t, ok := r.tokens[tenant]; ok {
		return t, nil
	}
	t, err := auth.Mint(r.secret, auth.Principal{Subject: "bench", Tenant: tenant, Scopes: auth.AllScopes}, 24*time.Hour)
	if err != nil {
		return "", err
	}
	r.tokens[tenant] = t
	return t, nil
}

// post sends a request and returns the status, the body and the time it took.
func (r *loadRun) post(ctx context.Context, method, path, token string, body any) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := r.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header, nil
}

func smallAlert(subject string, contact int64, priority string) map[string]any {
	b := alertBody(subject, map[string]any{"contactIds": []int64{contact}})
	if priority != "" {
		b["settings"].(map[string]any)["priority"] = map[string]any{"priority": priority}
	}
	return b
}

// sendAlert posts an alert and registers it with the final watch. It
// returns the accept latency in ms, and an error for anything but 2xx.
func (r *loadRun) sendAlert(ctx context.Context, tenant string, body any) (float64, int, error) {
	token, err := r.token(tenant)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	st, b, h, err := r.post(ctx, http.MethodPost, "/v2/alerts", token, body)
	accepted := time.Now()
	ms := float64(accepted.Sub(start).Microseconds()) / 1000
	if err != nil {
		return ms, 0, err
	}
	if st >= 300 {
		if ra := h.Get("Retry-After"); ra != "" {
			return ms, st, fmt.Errorf("status %d (Retry-After %s)", st, ra)
		}
		return ms, st, fmt.Errorf("status %d: %.200s", st, b)
	}
	var out struct {
		AlertID int64 `json:"alertId"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.AlertID == 0 {
		return ms, st, fmt.Errorf("no alert id in %.200s", b)
	}
	r.finals.add(out.AlertID, tenant, accepted)
	return ms, st, nil
}

// alertsUntilFinal sends n alerts from c clients and waits until they are final.
func (r *loadRun) alertsUntilFinal(ctx context.Context, tenant string, contact int64, n, c int) (BurstResult, error) {
	res := BurstResult{Alerts: n, Clients: c}
	var mu sync.Mutex
	var accept []float64
	start := time.Now()
	clients(ctx, n, c, func(i int) {
		body := smallAlert(fmt.Sprintf("Burst %d", i), contact, "")
		for attempt := 0; ; attempt++ {
			ms, st, err := r.sendAlert(ctx, tenant, body)
			mu.Lock()
			if err == nil {
				accept = append(accept, ms)
			} else if (st == 429 || st == 503) && attempt < 20 {
				res.Retried++
				mu.Unlock()
				_ = sleep(ctx, 500*time.Millisecond)
				continue
			} else {
				res.Errors++
			}
			mu.Unlock()
			break
		}
	})
	ids := r.finals.since(start)
	done, notFinal := r.finals.wait(ctx, ids, r.o.drain)
	res.NotFinal = notFinal
	var a2f []float64
	var last time.Time
	for _, d := range done {
		a2f = append(a2f, d.ms)
		if d.at.After(last) {
			last = d.at
		}
	}
	res.Accept, res.AcceptToFinal = latencyOf(accept), latencyOf(a2f)
	if !last.IsZero() {
		res.Seconds = last.Sub(start).Seconds()
		res.FinalPerSec = float64(len(done)) / res.Seconds
	}
	return res, nil
}

// clients runs do(i) for i from 1 to n on c goroutines, the clients: each
// takes the next i when it is done with the last, until every i is taken or
// ctx ends. It returns when they are all done.
func clients(ctx context.Context, n, c int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n || ctx.Err() != nil {
					return
				}
				do(i)
			}
		})
	}
	wg.Wait()
}

func (r *loadRun) burst(ctx context.Context, tenant string, contact int64) (BurstResult, error) {
	return r.alertsUntilFinal(ctx, tenant, contact, r.o.burst, r.o.clients)
}

// openLoop fires requests at a fixed rate, each in its own goroutine, so
// a slow answer does not slow the sender down.
func (r *loadRun) openLoop(ctx context.Context, tenant string, contact int64, rate int) (RateResult, error) {
	res := RateResult{Rate: rate}
	// The floor: GET /healthz at the same rate.
	hl, herrs := r.fire(ctx, rate, r.o.healthFor, func(ctx context.Context) (float64, error) {
		start := time.Now()
		st, _, _, err := r.post(ctx, http.MethodGet, "/healthz", "", nil)
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err == nil && st != 200 {
			err = fmt.Errorf("status %d", st)
		}
		return ms, err
	})
	res.Health, res.HealthErrors = latencyOf(hl), len(herrs)

	start := time.Now()
	var seq atomic.Int64
	al, errs := r.fire(ctx, rate, r.o.rateFor, func(ctx context.Context) (float64, error) {
		ms, _, err := r.sendAlert(ctx, tenant, smallAlert(fmt.Sprintf("Open loop %d/s #%d", rate, seq.Add(1)), contact, ""))
		return ms, err
	})
	res.Seconds = time.Since(start).Seconds()
	res.Accept, res.Errors, res.Sent = latencyOf(al), len(errs), len(al)+len(errs)
	if len(errs) > 0 {
		res.ErrorSample = errs[0].Error()
	}
	done, notFinal := r.finals.wait(ctx, r.finals.since(start), r.o.drain)
	var a2f []float64
	for _, d := range done {
		a2f = append(a2f, d.ms)
	}
	res.AcceptToFinal, res.NotFinal = latencyOf(a2f), notFinal
	return res, nil
}

// fire calls f rate times a second for d, without waiting for answers, and
// returns the latencies of the calls that succeeded and the errors.
func (r *loadRun) fire(ctx context.Context, rate int, d time.Duration, f func(context.Context) (float64, error)) ([]float64, []error) {
	var mu sync.Mutex
	var lat []float64
	var errs []error
	var wg sync.WaitGroup
	every := time.Second / time.Duration(rate)
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * every)
		if at.Sub(start) >= d || ctx.Err() != nil {
			break
		}
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms, err := f(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			lat = append(lat, ms)
		}()
	}
	wg.Wait()
	return lat, errs
}

// priority runs part 3.
func (r *loadRun) priority(ctx context.Context, tenants map[string]string, contact map[string]int64, bigGroup int64) (PriorityResult, error) {
	o := r.o
	res := PriorityResult{BigRecipients: o.big, Flood: o.flood}
	tokD, err := r.token(tenants["d"])
	if err != nil {
		return res, err
	}

	// Users of tenant d with a phone each and a reserved nonce, made
	// before the load starts.
	type verif struct{ path, nonce, number string }
	var verifs []verif
	for i := range o.verifications {
		local := fmt.Sprintf("20255501%02d", i%100)
		st, b, _, err := r.post(ctx, http.MethodPost, "/"+tenants["d"]+"/directory/bench/users", tokD,
			map[string]any{"name": map[string]any{"first": "Verify", "last": strconv.Itoa(i)}})
		if err != nil || st != 201 {
			return res, fmt.Errorf("create user: %d %s %v", st, b, err)
		}
		var u struct{ ID string }
		_ = json.Unmarshal(b, &u)
		user := "/" + tenants["d"] + "/directory/bench/users/" + u.ID
		if st, b, _, err := r.post(ctx, http.MethodPost, user+"/contact/phones", tokD, map[string]any{"number": local, "country": "US"}); err != nil || st != 201 {
			return res, fmt.Errorf("add phone: %d %s %v", st, b, err)
		}
		v := verif{path: user + "/contact/phones/%2B1" + local, nonce: "nonce-load-" + randomSuffix(), number: "+1" + local}
		if st, b, _, err := r.post(ctx, http.MethodPost, v.path+"/verification/nonce", tokD, map[string]any{"nonce": v.nonce}); err != nil || st != 201 {
			return res, fmt.Errorf("reserve nonce: %d %s %v", st, b, err)
		}
		verifs = append(verifs, v)
	}
	var amu sync.Mutex
	arrivals := map[string]time.Time{}
	watch := func(to string, at time.Time) {
		if !strings.HasPrefix(to, "+120255501") {
			return
		}
		amu.Lock()
		defer amu.Unlock()
		if _, ok := arrivals[to]; !ok {
			arrivals[to] = at
		}
	}
	r.lb.arrived.Store(&watch)
	defer r.lb.arrived.Store(nil)

	start := time.Now()
	big := alertBody("Big alert", map[string]any{"groups": []map[string]any{{"id": bigGroup}}})
	if _, _, err := r.sendAlert(ctx, tenants["b"], big); err != nil {
		return res, fmt.Errorf("big alert: %w", err)
	}
	bigIDs := r.finals.since(start)

	// The flood, from the usual number of clients, as fast as they can.
	floodStart := time.Now()
	var floodErrs atomic.Int64
	flooded := make(chan struct{})
	go func() {
		defer close(flooded)
		clients(ctx, o.flood, o.clients, func(i int) {
			if _, _, err := r.sendAlert(ctx, tenants["c"], smallAlert(fmt.Sprintf("Flood %d", i), contact["c"], "NonEmergency")); err != nil {
				floodErrs.Add(1)
			}
		})
	}()
	// Let the backlog build up, then the urgent work of tenant d, spread out.
	_ = sleep(ctx, time.Second)
	emStart := time.Now()
	var emErrs, codeErrs atomic.Int64
	sent := map[string]time.Time{}
	var smu sync.Mutex
	var uwg sync.WaitGroup
	n := max(o.emergency, o.verifications)
	for i := range n {
		if i < o.emergency {
			uwg.Add(1)
			go func() {
				defer uwg.Done()
				if _, _, err := r.sendAlert(ctx, tenants["d"], smallAlert(fmt.Sprintf("Emergency %d", i), contact["d"], "Emergency")); err != nil {
					emErrs.Add(1)
					logf("  Emergency alert: %v", err)
				}
			}()
		}
		if i < o.verifications {
			v := verifs[i]
			uwg.Add(1)
			go func() {
				defer uwg.Done()
				st, b, _, err := r.post(ctx, http.MethodPost, v.path+"/verification/resend", tokD, map[string]any{"nonce": v.nonce})
				if err != nil || st != 202 {
					codeErrs.Add(1)
					logf("  verification resend: %d %.200s %v", st, b, err)
					return
				}
				smu.Lock()
				sent[v.number] = time.Now()
				smu.Unlock()
			}()
		}
		_ = sleep(ctx, 250*time.Millisecond)
	}
	uwg.Wait()
	<-flooded
	res.FloodErrors, res.EmergencyErrors, res.CodeErrors = int(floodErrs.Load()), int(emErrs.Load()), int(codeErrs.Load())

	// Emergency alerts: tenant d's alerts since emStart.
	var emIDs []int64
	for _, id := range r.finals.since(emStart) {
		if r.finals.tenantOf(id) == tenants["d"] {
			emIDs = append(emIDs, id)
		}
	}
	done, notFinal := r.finals.wait(ctx, emIDs, r.o.drain)
	var em []float64
	for _, d := range done {
		em = append(em, d.ms)
	}
	res.Emergency, res.EmergencyNotFinal = latencyOf(em), notFinal
	// Codes: arrival at the SMS endpoint after the resend was answered.
	deadline := time.Now().Add(r.o.drain)
	for {
		amu.Lock()
		got := 0
		for num := range sent {
			if _, ok := arrivals[num]; ok {
				got++
			}
		}
		amu.Unlock()
		if got == len(sent) || time.Now().After(deadline) {
			break
		}
		_ = sleep(ctx, 100*time.Millisecond)
	}
	var codes []float64
	amu.Lock()
	for num, at := range sent {
		if arr, ok := arrivals[num]; ok {
			codes = append(codes, float64(arr.Sub(at).Microseconds())/1000)
		}
	}
	amu.Unlock()
	res.Codes, res.CodesMissing = latencyOf(codes), len(sent)-len(codes)

	// The big alert and the flood, for the record.
	bigDone, _ := r.finals.wait(ctx, bigIDs, 2*r.o.drain)
	if len(bigDone) == 1 {
		res.BigAcceptToFinalSec = bigDone[0].ms / 1000
	}
	var floodIDs []int64
	for _, id := range r.finals.since(floodStart) {
		if r.finals.tenantOf(id) == tenants["c"] {
			floodIDs = append(floodIDs, id)
		}
	}
	floodDone, _ := r.finals.wait(ctx, floodIDs, 2*r.o.drain)
	var last time.Time
	for _, d := range floodDone {
		if d.at.After(last) {
			last = d.at
		}
	}
	if !last.IsZero() {
		res.FloodFinalSec = last.Sub(floodStart).Seconds()
	}
	return res, nil
}

// history counts the tasks of a workflow and of its children.
func (r *loadRun) history(ctx context.Context, id string) (HistoryCount, error) {
	var h HistoryCount
	// The workflow is final in the database a moment before it completes.
	for range 50 {
		d, err := r.tc.DescribeWorkflowExecution(ctx, id, "")
		if err == nil && d.WorkflowExecutionInfo.Status != enums.WORKFLOW_EXECUTION_STATUS_RUNNING {
			break
		}
		_ = sleep(ctx, 100*time.Millisecond)
	}
	it := r.tc.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var children []string
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return h, fmt.Errorf("history of %s: %w", id, err)
		}
		h.Events++
		switch e.GetEventType() {
		case enums.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			h.WorkflowTasks++
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			h.Activities++
		case enums.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				h.LocalActivities++
			}
		case enums.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			h.Children++
			children = append(children, e.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetWorkflowId())
		}
	}
	for _, c := range children {
		ch, err := r.history(ctx, c)
		if err != nil {
			return h, err
		}
		h.WorkflowTasks += ch.WorkflowTasks
		h.Activities += ch.Activities
		h.LocalActivities += ch.LocalActivities
		h.Children += ch.Children
		h.Events += ch.Events
	}
	return h, nil
}

// emptyWorkflow is the least a workflow can be: started, one workflow
// task, completed.
func emptyWorkflow(workflow.Context) error { return nil }

// emptyWorkflows starts and completes as many empty workflows as the burst
// sent alerts, from the same number of clients, on a worker with the same
// options in this process.
func (r *loadRun) emptyWorkflows(ctx context.Context) (BurstResult, error) {
	queue := "bench-empty-" + randomSuffix()
	w := sdkworker.New(r.tc, queue, worker.SDKOptions(worker.Options{MaxActivities: 64}))
	w.RegisterWorkflowWithOptions(emptyWorkflow, workflow.RegisterOptions{Name: "BenchEmpty"})
	if err := w.Start(); err != nil {
		return BurstResult{}, fmt.Errorf("start empty-workflow worker: %w", err)
	}
	defer w.Stop()
	n, c := r.o.burst, r.o.clients
	res := BurstResult{Alerts: n, Clients: c}
	var mu sync.Mutex
	var accept, a2f []float64
	var last time.Time
	var waits sync.WaitGroup
	start := time.Now()
	prefix := "bench-empty-" + randomSuffix()
	clients(ctx, n, c, func(i int) {
		t0 := time.Now()
		run, err := r.tc.ExecuteWorkflow(ctx, tclient.StartWorkflowOptions{ID: fmt.Sprintf("%s-%d", prefix, i), TaskQueue: queue}, "BenchEmpty")
		accepted := time.Now()
		mu.Lock()
		if err != nil {
			res.Errors++
			mu.Unlock()
			return
		}
		accept = append(accept, float64(accepted.Sub(t0).Microseconds())/1000)
		mu.Unlock()
		waits.Go(func() {
			err := run.Get(ctx, nil)
			done := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.NotFinal++
				return
			}
			a2f = append(a2f, float64(done.Sub(accepted).Microseconds())/1000)
			if done.After(last) {
				last = done
			}
		})
	})
	waits.Wait()
	res.Accept, res.AcceptToFinal = latencyOf(accept), latencyOf(a2f)
	if !last.IsZero() {
		res.Seconds = last.Sub(start).Seconds()
		res.FinalPerSec = float64(len(a2f)) / res.Seconds
	}
	return res, nil
}

// finalWatch learns when alerts become final (status Sent or Failed) with
// one query every 100 ms for every pending alert (a primary-key lookup of
// a few thousand ids at most), and takes the time from the alert's own
// sent_at / failed_at, so the poll interval does not add to the figures
// and the watching does not load the API or Temporal.
type finalWatch struct {
	db       *storage.DB
	mu       sync.Mutex
	accepted map[int64]time.Time
	order    []int64
	tenant   map[int64]string
	final    map[int64]time.Time
}

type finalAt struct {
	id int64
	at time.Time
	ms float64
}

func newFinalWatch(db *storage.DB) *finalWatch {
	return &finalWatch{db: db, accepted: map[int64]time.Time{}, tenant: map[int64]string{}, final: map[int64]time.Time{}}
}

func (f *finalWatch) add(id int64, tenant string, accepted time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accepted[id] = accepted
	f.tenant[id] = tenant
	f.order = append(f.order, id)
}

// since lists the alerts accepted at or after t.
func (f *finalWatch) since(t time.Time) []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int64
	for _, id := range f.order {
		if !f.accepted[id].Before(t) {
			out = append(out, id)
		}
	}
	return out
}

func (f *finalWatch) tenantOf(id int64) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tenant[id]
}

func (f *finalWatch) run(ctx context.Context) {
	for ctx.Err() == nil {
		f.mu.Lock()
		var pending []benchdata.AlertKey
		for id := range f.accepted {
			if _, ok := f.final[id]; !ok {
				pending = append(pending, benchdata.AlertKey{Tenant: f.tenant[id], ID: id})
			}
		}
		f.mu.Unlock()
		if len(pending) > 0 {
			if final, err := benchdata.FinalTimes(ctx, f.db, pending); err == nil {
				f.mu.Lock()
				for id, at := range final {
					f.final[id] = at
				}
				f.mu.Unlock()
			}
		}
		_ = sleep(ctx, 100*time.Millisecond)
	}
}

// wait waits up to d for the alerts to be final and returns those that
// are, with their accept-to-final times, and how many are not.
func (f *finalWatch) wait(ctx context.Context, ids []int64, d time.Duration) ([]finalAt, int) {
	deadline := time.Now().Add(d)
	for {
		f.mu.Lock()
		var done []finalAt
		for _, id := range ids {
			if at, ok := f.final[id]; ok {
				done = append(done, finalAt{id: id, at: at, ms: float64(at.Sub(f.accepted[id]).Microseconds()) / 1000})
			}
		}
		f.mu.Unlock()
		if len(done) == len(ids) || time.Now().After(deadline) || ctx.Err() != nil {
			return done, len(ids) - len(done)
		}
		_ = sleep(ctx, 100*time.Millisecond)
	}
}

// loadAverage is the first three fields of /proc/loadavg (as uptime shows them).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func writeLoadResult(dir string, r *LoadResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := "load"
	if r.Quick {
		name = "load-quick"
	}
	stamp := r.StartedAt.Format("20060102-150405")
	b, _ := json.MarshalIndent(r, "", "  ")
	jsonPath := filepath.Join(dir, fmt.Sprintf("%s-%s.json", name, stamp))
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# tocsin-bench load%s (%s)\n\n", map[bool]string{true: ", quick sizes", false: ""}[r.Quick], r.StartedAt.Format(time.RFC3339))
	fmt.Fprintf(&md, "%d CPUs; load average %s before, %s after.\n\n", r.CPUs, r.LoadBefore, r.LoadAfter)
	h := r.OneAlert
	fmt.Fprintf(&md, "One single-recipient alert cost Temporal: workflow tasks %d, activities %d, local activities %d, child workflows %d (history events %d).\n\n",
		h.WorkflowTasks, h.Activities, h.LocalActivities, h.Children, h.Events)
	b1 := r.Burst
	fmt.Fprintf(&md, "## 1. Burst: %d single-recipient alerts from %d clients\n\n| measure | value |\n| --- | --- |\n", b1.Alerts, b1.Clients)
	fmt.Fprintf(&md, "| alerts final per second | %.1f (all final after %.2f s) |\n", b1.FinalPerSec, b1.Seconds)
	fmt.Fprintf(&md, "| accept p50 / p99 | %s |\n| accept to final p50 / p99 | %s |\n", b1.Accept, b1.AcceptToFinal)
	fmt.Fprintf(&md, "| errors / retried (429, 503) / not final | %d / %d / %d |\n\n", b1.Errors, b1.Retried, b1.NotFinal)
	fmt.Fprintf(&md, "## 2. Open loop\n\n| requests/s | seconds | sent | errors | accept p50 / p99 | accept to final p50 / p99 | not final | GET /healthz p50 / p99 (errors) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, x := range r.Rates {
		fmt.Fprintf(&md, "| %d | %.0f | %d | %d | %s | %s | %d | %s (%d) |\n", x.Rate, x.Seconds, x.Sent, x.Errors, x.Accept, x.AcceptToFinal, x.NotFinal, x.Health, x.HealthErrors)
	}
	for _, x := range r.Rates {
		if x.ErrorSample != "" {
			fmt.Fprintf(&md, "\nFirst error at %d/s: `%.200s`\n", x.Rate, x.ErrorSample)
		}
	}
	p := r.Priority
	fmt.Fprintf(&md, "\n## 3. Priority: a %d-recipient alert and a flood of %d NonEmergency alerts of other tenants\n\n| measure | value |\n| --- | --- |\n", p.BigRecipients, p.Flood)
	fmt.Fprintf(&md, "| Emergency alerts accept to final p50 / p99 | %s over %d (%d errors, %d not final) |\n", p.Emergency, p.Emergency.N, p.EmergencyErrors, p.EmergencyNotFinal)
	fmt.Fprintf(&md, "| verification code arrival p50 / p99 | %s over %d (%d errors, %d missing) |\n", p.Codes, p.Codes.N, p.CodeErrors, p.CodesMissing)
	secs := func(v float64) string {
		if v == 0 {
			return "not final when the run gave up"
		}
		return fmt.Sprintf("%.2f s", v)
	}
	fmt.Fprintf(&md, "| big alert accept to Sent | %s |\n| flood: all final after | %s (%d errors) |\n\n", secs(p.BigAcceptToFinalSec), secs(p.FloodFinalSec), p.FloodErrors)
	e := r.Empty
	fmt.Fprintf(&md, "## 4. The limit: %d empty workflows from %d clients, same Temporal server\n\n| measure | value |\n| --- | --- |\n", e.Alerts, e.Clients)
	fmt.Fprintf(&md, "| empty workflows completed per second | %.1f |\n| start p50 / p99 | %s |\n| start to completed p50 / p99 | %s |\n", e.FinalPerSec, e.Accept, e.AcceptToFinal)
	fmt.Fprintf(&md, "| tocsin's burst as a share of it | %.0f %% |\n", 100*r.RatioOfFlow)
	mdPath := filepath.Join(dir, fmt.Sprintf("%s-%s.md", name, stamp))
	if err := os.WriteFile(mdPath, []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Println(md.String())
	fmt.Printf("written %s and %s\n", jsonPath, mdPath)
	return nil
}
