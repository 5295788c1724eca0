package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/sms"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/storage/benchdata"
)

type options struct {
	services
	recipients  int
	samples     int
	batch       int
	parallelism int
	concurrency int
	killAt      float64
	keep        bool
	timeout     time.Duration
}

// AlertResult is what one run measured; it is written as JSON and as a Markdown table.
type AlertResult struct {
	Command             string    `json:"command"`
	StartedAt           time.Time `json:"startedAt"`
	Recipients          int       `json:"recipients"`
	BatchSize           int       `json:"batchSize"`
	Parallelism         int       `json:"parallelism"`
	ProviderConcurrency int       `json:"providerConcurrency"`
	CPUs                int       `json:"cpus"`
	SeedSeconds         float64   `json:"seedSeconds"`
	AcceptSamples       int       `json:"acceptSamples"`
	AcceptP50Ms         float64   `json:"acceptP50Ms"`
	AcceptP99Ms         float64   `json:"acceptP99Ms"`
	BigAcceptMs         float64   `json:"bigAcceptMs"`
	ResolveSeconds      float64   `json:"resolveSeconds"`
	AcceptToFinalSec    float64   `json:"acceptToFinalSeconds"`
	AcceptToSentSec     float64   `json:"acceptToSentSeconds"`
	DeliveriesPerSec    float64   `json:"deliveriesPerSecond"`
	WorkerPeakRSSMB     float64   `json:"workerPeakRssMB"`
	LoopbackRawPerSec   float64   `json:"loopbackRawPerSecond"`
	Status              string    `json:"status"`
	FinalResults        int64     `json:"finalResults"`
	// Crash run only.
	KilledAtFinal          int64 `json:"killedAtFinal,omitempty"`
	ResultRows             int64 `json:"resultRows,omitempty"`
	DistinctKeysAtSMS      int64 `json:"distinctKeysAtSms,omitempty"`
	RepeatedKeysAtSMS      int64 `json:"repeatedKeysAtSms,omitempty"`
	LostRecipients         int64 `json:"lostRecipients,omitempty"`
	ExactlyOnePerRecipient bool  `json:"exactlyOnePerRecipient,omitempty"`
}

func runAlert(args []string, crash bool) error {
	name := "alert"
	if crash {
		name = "crash"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	o := options{}
	defRecipients := 100000
	fs.IntVar(&o.recipients, "recipients", defRecipients, "contacts to seed and alert")
	fs.IntVar(&o.samples, "samples", 100, "small alerts sent first to measure accept latency")
	o.flags(fs, "the tocsin binary, run as the worker process", "folder for the JSON and Markdown results")
	fs.IntVar(&o.batch, "batch-size", envInt("TOCSIN_DELIVERY_BATCH_SIZE", 1000), "TOCSIN_DELIVERY_BATCH_SIZE of the worker")
	fs.IntVar(&o.parallelism, "parallelism", envInt("TOCSIN_DELIVERY_PARALLELISM", 8), "TOCSIN_DELIVERY_PARALLELISM of the worker")
	fs.IntVar(&o.concurrency, "provider-concurrency", envInt("TOCSIN_PROVIDER_CONCURRENCY", 64), "TOCSIN_PROVIDER_CONCURRENCY of the worker")
	fs.Float64Var(&o.killAt, "kill-at", 0.3, "crash: kill the worker when this share of recipients is final")
	fs.BoolVar(&o.keep, "keep", false, "keep the run's database schema")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if crash && o.samples == 100 {
		o.samples = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	res := &AlertResult{Command: name, StartedAt: time.Now().UTC(), Recipients: o.recipients, BatchSize: o.batch, Parallelism: o.parallelism,
		ProviderConcurrency: o.concurrency, CPUs: runtime.NumCPU()}

	// The loopback SMS endpoint and its raw throughput with tocsin's own sender.
	lb, err := startLoopback()
	if err != nil {
		return err
	}
	defer lb.close()
	raw, err := rawThroughput(ctx, lb, o.concurrency, o.parallelism, min(50000, max(o.recipients/2, 5000)))
	if err != nil {
		return fmt.Errorf("loopback throughput: %w", err)
	}
	res.LoopbackRawPerSec = raw
	lb.reset()
	logf("loopback SMS endpoint %s: %.0f messages/s raw", lb.url, raw)

	// A database schema of its own.
	db, schema, dsn, done, err := migratedSchema(ctx, o.dbURL, o.keep, 20)
	if err != nil {
		return err
	}
	defer done()
	tenant := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000+1_000_000_000, 10)
	t0 := time.Now()
	groupID, firstContact, err := benchdata.SeedContacts(ctx, db, tenant, o.recipients)
	if err != nil {
		return err
	}
	res.SeedSeconds = time.Since(t0).Seconds()
	logf("seeded %d contacts in %.1fs (schema %s)", o.recipients, res.SeedSeconds, schema)

	// The worker: a separate process, so its memory is its own.
	queue := "bench-" + randomSuffix()
	env := o.workerEnv(dsn, queue, lb.url,
		"TOCSIN_DELIVERY_BATCH_SIZE="+strconv.Itoa(o.batch), "TOCSIN_DELIVERY_PARALLELISM="+strconv.Itoa(o.parallelism),
		"TOCSIN_PROVIDER_CONCURRENCY="+strconv.Itoa(o.concurrency))
	w, err := o.start(name+"-worker", env, "worker")
	if err != nil {
		return err
	}
	defer func() { w.stop() }()

	// The API, in this process.
	a, err := benchApp(ctx, o.temporal, o.minio, queue, db)
	if err != nil {
		return err
	}
	defer a.Temporal.Close()
	base, stopAPI, err := serveAPI(ctx, a)
	if err != nil {
		return err
	}
	defer stopAPI()
	api := &client{base: base, http: &http.Client{Timeout: 60 * time.Second}}
	api.token, err = auth.Mint(a.Config.JWTSecret, auth.Principal{Subject: "bench", Tenant: tenant, Scopes: auth.AllScopes}, 24*time.Hour)
	if err != nil {
		return err
	}

	// Accept latency of small alerts.
	if o.samples > 0 {
		var lat []float64
		var ids []int64
		for i := 0; i < o.samples; i++ {
			start := time.Now()
			id, err := api.send(ctx, alertBody(fmt.Sprintf("Sample %d", i), map[string]any{"contactIds": []int64{firstContact}}))
			if err != nil {
				return err
			}
			lat = append(lat, float64(time.Since(start).Microseconds())/1000)
			ids = append(ids, id)
		}
		sort.Float64s(lat)
		res.AcceptSamples, res.AcceptP50Ms, res.AcceptP99Ms = len(lat), percentile(lat, 0.50), percentile(lat, 0.99)
		logf("accept latency over %d alerts: p50 %.1f ms, p99 %.1f ms", len(lat), res.AcceptP50Ms, res.AcceptP99Ms)
		for _, id := range ids {
			if _, err := api.waitStatus(ctx, id, func(s statusBody) bool { return s.Completed }); err != nil {
				return err
			}
		}
		lb.reset()
	}

	// The big alert.
	start := time.Now()
	id, err := api.send(ctx, alertBody("Benchmark alert", map[string]any{"groups": []map[string]any{{"id": groupID}}}))
	if err != nil {
		return err
	}
	accepted := time.Now()
	res.BigAcceptMs = float64(accepted.Sub(start).Microseconds()) / 1000
	logf("alert %d accepted in %.1f ms; delivering to %d recipients", id, res.BigAcceptMs, o.recipients)
	killed := !crash
	var sentAt time.Time
	lastLog := time.Now()
	var st statusBody
	for {
		st, err = api.status(ctx, id)
		if err != nil {
			return err
		}
		if sentAt.IsZero() && (st.Status == "Sent" || st.Status == "Failed") {
			sentAt = time.Now()
		}
		if !killed && st.Deliveries.Final >= int64(float64(o.recipients)*o.killAt) {
			res.KilledAtFinal = st.Deliveries.Final
			if hwm := w.peakRSS(); hwm > res.WorkerPeakRSSMB {
				res.WorkerPeakRSSMB = hwm
			}
			logf("SIGKILL the worker (pid %d) at %d final results", w.cmd.Process.Pid, st.Deliveries.Final)
			w.kill()
			w, err = o.start(name+"-worker-2", env, "worker")
			if err != nil {
				return err
			}
			killed = true
		}
		if st.Deliveries.Final >= int64(o.recipients) && (st.Status == "Sent" || st.Status == "Failed") {
			break
		}
		if time.Since(lastLog) > 2*time.Second {
			logf("  %s: %d of %d final", st.Status, st.Deliveries.Final, o.recipients)
			lastLog = time.Now()
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("alert not final: %s with %d of %d final: %w", st.Status, st.Deliveries.Final, o.recipients, err)
		}
	}
	final := time.Now()
	res.Status, res.FinalResults = st.Status, st.Deliveries.Final
	res.AcceptToFinalSec = final.Sub(accepted).Seconds()
	res.AcceptToSentSec = sentAt.Sub(accepted).Seconds()
	res.DeliveriesPerSec = float64(o.recipients) / res.AcceptToFinalSec
	if st.ProcessingAt != nil && st.QueuedAt != nil {
		res.ResolveSeconds = st.ProcessingAt.Sub(*st.QueuedAt).Seconds()
	}
	if hwm := w.peakRSS(); hwm > res.WorkerPeakRSSMB {
		res.WorkerPeakRSSMB = hwm
	}
	logf("every recipient final after %.2fs (%.0f deliveries/s); worker peak RSS %.0f MB", res.AcceptToFinalSec, res.DeliveriesPerSec, res.WorkerPeakRSSMB)

	if crash {
		if _, err := api.waitStatus(ctx, id, func(s statusBody) bool { return s.Completed }); err != nil {
			return err
		}
		cov, err := benchdata.FirstCycleCoverage(ctx, db, tenant, id, "text")
		if err != nil {
			return err
		}
		rows, recipients := cov.Rows, cov.Recipients-cov.Covered
		res.ResultRows, res.LostRecipients = rows, recipients
		res.DistinctKeysAtSMS, res.RepeatedKeysAtSMS = lb.distinct.Load(), lb.repeated.Load()
		res.ExactlyOnePerRecipient = rows == int64(o.recipients) && recipients == 0 && res.DistinctKeysAtSMS == int64(o.recipients)
		logf("after the crash: %d result rows for %d recipients, %d without a result, %d distinct keys at the SMS endpoint (%d repeated sends of a key, answered idempotently)",
			rows, o.recipients, recipients, res.DistinctKeysAtSMS, res.RepeatedKeysAtSMS)
	}
	if err := writeAlertResult(o.out, res); err != nil {
		return err
	}
	if crash && !res.ExactlyOnePerRecipient {
		return errors.New("the crash run did not end with exactly one result per recipient")
	}
	return nil
}

func alertBody(subject string, recipients map[string]any) map[string]any {
	return map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": subject, "body": "Hello {{firstName}}, this is a test of the alert system."},
		"channels":   map[string]any{"text": map[string]any{"enabled": true}},
		"recipients": recipients,
	}}
}

// loopback is a minimal text-message provider: it answers every message
// with an id, counts distinct idempotency keys, and answers a repeated key
// with the first answer (as a provider honouring idempotency keys does).
type loopback struct {
	url      string
	srv      *http.Server
	keys     sync.Map
	distinct atomic.Int64
	repeated atomic.Int64
	// arrived, when set, is told of every message as it arrives.
	arrived atomic.Pointer[func(to string, at time.Time)]
}

func startLoopback() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	lb := &loopback{url: "http://" + ln.Addr().String() + "/messages"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /messages", func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			To, Body, IdempotencyKey string
		}
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.To == "" {
			http.Error(w, `{"error":"bad message"}`, http.StatusBadRequest)
			return
		}
		if f := lb.arrived.Load(); f != nil {
			(*f)(m.To, time.Now())
		}
		if _, dup := lb.keys.LoadOrStore(m.IdempotencyKey, struct{}{}); dup {
			lb.repeated.Add(1)
		} else {
			lb.distinct.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"m-`+m.IdempotencyKey+`"}`)
	})
	lb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = lb.srv.Serve(ln) }()
	return lb, nil
}

func (l *loopback) reset() {
	l.keys.Range(func(k, _ any) bool { l.keys.Delete(k); return true })
	l.distinct.Store(0)
	l.repeated.Store(0)
}

func (l *loopback) close() { _ = l.srv.Close() }

// rawThroughput sends n messages straight to the loopback endpoint with
// tocsin's SMS sender, in batches of 1000 with parallel batches in flight
// (as the worker runs them), and returns messages per second.
func rawThroughput(ctx context.Context, lb *loopback, concurrency, parallel, n int) (float64, error) {
	snd, err := sms.New(sms.Config{URL: lb.url, Concurrency: concurrency})
	if err != nil {
		return 0, err
	}
	var failed sync.Once
	var sendErr error
	start := time.Now()
	clients(ctx, (n+999)/1000, max(parallel, 1), func(batch int) {
		from := (batch - 1) * 1000
		msgs := make([]channels.Message, min(1000, n-from))
		for i := range msgs {
			msgs[i] = channels.Message{Key: fmt.Sprintf("raw-%d", from+i), To: "+15550000000", Text: "Hello First1, this is a test of the alert system.", Channel: channels.Text}
		}
		if _, err := snd.Send(ctx, msgs); err != nil {
			failed.Do(func() { sendErr = err })
		}
	})
	if sendErr != nil {
		return 0, sendErr
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

type workerProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// peakRSS is the process's peak resident set (VmHWM) in MB.
func (w *workerProc) peakRSS() float64 { return w.statusMB("VmHWM:") }

// rss is the process's resident set now (VmRSS) in MB.
func (w *workerProc) rss() float64 { return w.statusMB("VmRSS:") }

// statusMB reads a size in kB from the process's /proc status, in MB.
func (w *workerProc) statusMB(field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

func (w *workerProc) kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.done
}

func (w *workerProc) stop() {
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(15 * time.Second):
		w.kill()
	}
}

type client struct {
	base, token string
	http        *http.Client
}

func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

func (c *client) send(ctx context.Context, body any) (int64, error) {
	var res struct {
		AlertID int64 `json:"alertId"`
	}
	err := c.do(ctx, http.MethodPost, "/v2/alerts", body, &res)
	return res.AlertID, err
}

type statusBody struct {
	Status     string `json:"status"`
	Completed  bool   `json:"completed"`
	Deliveries struct {
		Final int64 `json:"final"`
	} `json:"deliveries"`
	QueuedAt     *time.Time `json:"queuedAt"`
	ProcessingAt *time.Time `json:"processingAt"`
}

func (c *client) status(ctx context.Context, id int64) (statusBody, error) {
	var s statusBody
	err := c.do(ctx, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/status", id), nil, &s)
	return s, err
}

func (c *client) waitStatus(ctx context.Context, id int64, ok func(statusBody) bool) (statusBody, error) {
	for {
		s, err := c.status(ctx, id)
		if err != nil {
			return s, err
		}
		if ok(s) {
			return s, nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return s, fmt.Errorf("alert %d stuck at %s: %w", id, s.Status, err)
		}
	}
}

func writeAlertResult(dir string, r *AlertResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	stamp := r.StartedAt.Format("20060102-150405")
	b, _ := json.MarshalIndent(r, "", "  ")
	jsonPath := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.json", r.Command, r.Recipients, stamp))
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# tocsin-bench %s, %d recipients (%s)\n\n| measure | value |\n| --- | --- |\n", r.Command, r.Recipients, r.StartedAt.Format(time.RFC3339))
	row := func(k, v string) { fmt.Fprintf(&md, "| %s | %s |\n", k, v) }
	row("CPUs", strconv.Itoa(r.CPUs))
	row("batch size / parallelism / provider concurrency", fmt.Sprintf("%d / %d / %d", r.BatchSize, r.Parallelism, r.ProviderConcurrency))
	row("seeding contacts", fmt.Sprintf("%.1f s", r.SeedSeconds))
	if r.AcceptSamples > 0 {
		row("accept latency POST /v2/alerts (p50 / p99)", fmt.Sprintf("%.1f ms / %.1f ms over %d alerts", r.AcceptP50Ms, r.AcceptP99Ms, r.AcceptSamples))
	}
	row("accept latency of the big alert", fmt.Sprintf("%.1f ms", r.BigAcceptMs))
	row("recipient resolution (Queued to Processing)", fmt.Sprintf("%.2f s", r.ResolveSeconds))
	row("accept to every recipient final", fmt.Sprintf("%.2f s", r.AcceptToFinalSec))
	row("accept to status Sent", fmt.Sprintf("%.2f s", r.AcceptToSentSec))
	row("deliveries per second", fmt.Sprintf("%.0f", r.DeliveriesPerSec))
	row("worker peak RSS (VmHWM)", fmt.Sprintf("%.0f MB", r.WorkerPeakRSSMB))
	row("loopback SMS endpoint raw throughput", fmt.Sprintf("%.0f messages/s", r.LoopbackRawPerSec))
	row("final status", fmt.Sprintf("%s, %d final results", r.Status, r.FinalResults))
	if r.Command == "crash" {
		row("worker killed (SIGKILL) at", fmt.Sprintf("%d final results", r.KilledAtFinal))
		row("result rows / recipients without a result", fmt.Sprintf("%d / %d", r.ResultRows, r.LostRecipients))
		row("distinct idempotency keys at the SMS endpoint / repeated sends", fmt.Sprintf("%d / %d", r.DistinctKeysAtSMS, r.RepeatedKeysAtSMS))
		row("exactly one final result per recipient", strconv.FormatBool(r.ExactlyOnePerRecipient))
	}
	mdPath := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.md", r.Command, r.Recipients, stamp))
	if err := os.WriteFile(mdPath, []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Println(md.String())
	fmt.Printf("written %s and %s\n", jsonPath, mdPath)
	return nil
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}

func schemaDSN(dsn, schema string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
