package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/benchdata"
	"github.com/tocsin/tocsin/storage/contacts"
)

const importUsage = `usage: tocsin-bench import [--rows N] [--out DIR] [--skip-http] [--keep]

Settings come from TOCSIN_* environment variables (TOCSIN_DATABASE_URL picks
the database); the benchmark works in a schema of its own and drops it after.
`

// runImport runs the import benchmark; args start with "import".
func runImport(args []string) error {
	if len(args) == 0 || args[0] != "import" {
		fmt.Fprint(os.Stderr, importUsage)
		return errors.New("name a benchmark: import")
	}
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	rows := fs.Int("rows", 1_000_000, "data rows of the generated file")
	out := fs.String("out", ".bench", "folder for the file and the results")
	skipHTTP := fs.Bool("skip-http", false, "skip the import over HTTP")
	keep := fs.Bool("keep", false, "keep the benchmark schema")
	fs.StringVar(&cpuProfiles, "cpuprofile", "", "folder for a CPU profile of each phase (none when empty)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return benchImport(ctx, *rows, *out, *skipHTTP, *keep)
}

// Phase is one measured step.
type Phase struct {
	Name        string  `json:"name"`
	Rows        int64   `json:"rows"`
	Seconds     float64 `json:"seconds"`
	RowsPerSec  float64 `json:"rowsPerSecond"`
	PeakHeapMiB float64 `json:"peakHeapMiB"`
	MaxRSSMiB   float64 `json:"maxRssMiB"`
	Note        string  `json:"note,omitempty"`
}

// Result is what the benchmark writes to JSON.
type Result struct {
	Benchmark string    `json:"benchmark"`
	At        time.Time `json:"at"`
	Rows      int       `json:"rows"`
	FileBytes int64     `json:"fileBytes"`
	GoVersion string    `json:"goVersion"`
	CPUs      int       `json:"cpus"`
	Postgres  string    `json:"postgres"`
	Phases    []Phase   `json:"phases"`
	// HTTPRatio is the HTTP import's rows/s over the direct import's, both
	// into empty tables; 0 when the HTTP import was skipped.
	HTTPRatio float64 `json:"httpRatio,omitempty"`
	// Load is the system load average (1, 5, 15 minutes) at the end, as
	// /proc/loadavg tells it; empty where there is none.
	Load string `json:"load,omitempty"`
}

// sampler records the peak Go heap in use while a phase runs.
type sampler struct {
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

func startSampler() *sampler {
	runtime.GC()
	s := &sampler{stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > s.peak.Load() {
				s.peak.Store(ms.HeapInuse)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) done() float64 {
	close(s.stop)
	s.wg.Wait()
	return float64(s.peak.Load()) / (1 << 20)
}

func maxRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

// cpuProfiles is the folder for per-phase CPU profiles; empty for none.
var cpuProfiles string

func measure(name string, f func() (int64, string, error)) (Phase, error) {
	fmt.Fprintf(os.Stderr, "%s...\n", name)
	if cpuProfiles != "" {
		if pf, err := os.Create(filepath.Join(cpuProfiles, strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(name)+".pprof")); err == nil {
			if err := pprof.StartCPUProfile(pf); err == nil {
				defer func() { pprof.StopCPUProfile(); _ = pf.Close() }()
			}
		}
	}
	s := startSampler()
	start := time.Now()
	n, note, err := f()
	secs := time.Since(start).Seconds()
	p := Phase{Name: name, Rows: n, Seconds: round(secs), PeakHeapMiB: round(s.done()), MaxRSSMiB: round(maxRSS()), Note: note}
	if secs > 0 {
		p.RowsPerSec = round(float64(n) / secs)
	}
	if err != nil {
		return p, fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(os.Stderr, "  %d rows in %.1fs: %.0f rows/s, peak heap %.1f MiB, max RSS %.1f MiB %s\n",
		p.Rows, p.Seconds, p.RowsPerSec, p.PeakHeapMiB, p.MaxRSSMiB, note)
	return p, nil
}

func round(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Frances", "Niklaus", "José", "Zoë"}
	lastNames  = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Allen", "Wirth", "Núñez", "O'Neil"}
	roles      = []string{"Floor warden", "First aider", "Incident commander"}
)

// generate writes a contacts CSV of n rows to path: 90% with an external id,
// all with an email and a mobile phone, some with roles and a work phone,
// two custom fields, and one bad email address in every 10,000 rows.
func generate(path string, n int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	fmt.Fprint(w, "externalId,firstName,lastName,emails,mobilePhones,workPhones,roles,custom.site,custom.department\r\n")
	for i := range n {
		ext := ""
		if i%10 != 0 {
			ext = fmt.Sprintf("EMP-%07d", i)
		}
		first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
		email := fmt.Sprintf("%s.%d@example.com", strings.ToLower(first[:1]), i)
		if i%10000 == 9999 {
			email = "broken@"
		}
		work, role := "", ""
		if i%4 == 0 {
			work = fmt.Sprintf("+1666%07d", i)
		}
		if i%50 == 0 {
			role = roles[r.IntN(len(roles))]
		}
		fmt.Fprintf(w, "%s,%s,\"%s\",%s,'+1555%07d,%s,%s,Site %d,Dept %d\r\n", ext, first, last, email, i, work, role, r.IntN(200), r.IntN(40))
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

func importFile(ctx context.Context, db *storage.DB, tenant, path, list string) (contacts.ImportResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return contacts.ImportResult{}, err
	}
	defer f.Close()
	im, err := contacts.BeginImport(ctx, db, tenant, 0)
	if err != nil {
		return contacts.ImportResult{}, err
	}
	defer im.Rollback()
	if err := im.Stage(ctx, f); err != nil {
		return contacts.ImportResult{}, err
	}
	return im.Finish(ctx, list, "benchmark")
}

func summary(r contacts.ImportResult) string {
	return fmt.Sprintf("(created %d, updated %d, unchanged %d, skipped %d)", r.Created, r.Updated, r.Unchanged, r.Skipped)
}

func benchImport(ctx context.Context, rows int, outDir string, skipHTTP, keep bool) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if err := storage.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	admin, err := storage.Open(ctx, cfg.DatabaseURL, 1)
	if err != nil {
		return err
	}
	defer admin.Close()
	db, drop, err := benchSchema(ctx, admin, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	if !keep {
		defer drop()
	}
	defer db.Close()
	res := Result{Benchmark: "recipients-import", At: time.Now().UTC(), Rows: rows, GoVersion: runtime.Version(), CPUs: runtime.NumCPU()}
	res.Postgres = benchdata.ServerVersion(ctx, db)

	path := filepath.Join(outDir, fmt.Sprintf("contacts-%d.csv", rows))
	fmt.Fprintf(os.Stderr, "generating %s...\n", path)
	if res.FileBytes, err = generate(path, rows); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	defer os.Remove(path)
	tenant := "900000001"

	// phase settles on (unless nil) and measures f as a phase named name.
	phase := func(on *storage.DB, name string, f func() (int64, string, error)) error {
		if on != nil {
			if err := settle(ctx, admin, on); err != nil {
				return err
			}
		}
		p, err := measure(name, f)
		res.Phases = append(res.Phases, p)
		return err
	}
	if err := phase(db, "import (new contacts)", func() (int64, string, error) {
		r, err := importFile(ctx, db, tenant, path, "first")
		return r.Rows, summary(r), err
	}); err != nil {
		return err
	}
	if !skipHTTP {
		if err := settle(ctx, admin, db); err != nil {
			return err
		}
		// Into empty tables of a schema of its own, as the direct import
		// above, so that the two compare the paths and not the tables.
		hdb, hdrop, err := benchSchema(ctx, admin, cfg.DatabaseURL)
		if err != nil {
			return err
		}
		err = phase(hdb, "import over HTTP (new contacts, default limits)", func() (int64, string, error) {
			return importHTTP(ctx, cfg, hdb, path, res.FileBytes, tenant)
		})
		hdb.Close()
		hdrop()
		if err != nil {
			return err
		}
		if direct := res.Phases[0].RowsPerSec; direct > 0 {
			res.HTTPRatio = float64(int64(res.Phases[1].RowsPerSec/direct*100+0.5)) / 100
		}
	}
	if err := phase(db, "import again (all matched)", func() (int64, string, error) {
		r, err := importFile(ctx, db, tenant, path, "second")
		return r.Rows, summary(r), err
	}); err != nil {
		return err
	}
	if err := phase(nil, "export", func() (int64, string, error) {
		exp, err := contacts.BeginExport(ctx, db, tenant)
		if err != nil {
			return 0, "", err
		}
		cw := &countingWriter{}
		n, err := exp.WriteCSV(ctx, cw, nil)
		return n, fmt.Sprintf("(%.1f MiB of CSV)", float64(cw.n)/(1<<20)), err
	}); err != nil {
		return err
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		res.Load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	if err := benchdata.VacuumContacts(ctx, db); err != nil {
		return err
	}
	plans, err := explainAll(ctx, db, tenant)
	if err != nil {
		return err
	}
	return write(outDir, res, plans)
}

// benchSchema creates a schema of its own, migrated, and returns a handle
// whose connections work in it and a function that drops it.
func benchSchema(ctx context.Context, admin *storage.DB, dsn string) (*storage.DB, func(), error) {
	schema := "bench_" + randomSuffix()
	if err := benchdata.CreateSchema(ctx, admin, schema); err != nil {
		return nil, nil, err
	}
	drop := func() { benchdata.DropSchema(context.Background(), admin, schema) }
	db, err := storage.Open(ctx, schemaDSN(dsn, schema), 4)
	if err == nil {
		err = db.Migrate(ctx)
	}
	if err != nil {
		drop()
		return nil, nil, err
	}
	return db, drop, nil
}

// settle brings the database to rest before a measured phase: the tables of
// db vacuumed and analyzed, and a checkpoint (when the role may take one),
// so one phase's leftovers do not slow the next.
func settle(ctx context.Context, admin, db *storage.DB) error {
	if err := benchdata.VacuumContacts(ctx, db); err != nil {
		return err
	}
	benchdata.Checkpoint(ctx, admin)
	return nil
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// importHTTP posts the file to createFromFile of tocsin's API running in
// this process, with the limits of cfg (the defaults unless TOCSIN_*
// variables change them), streaming it from disk on the client side.
func importHTTP(ctx context.Context, cfg config.Config, db *storage.DB, path string, size int64, tenant string) (int64, string, error) {
	// The API as the wiring builds it, over db and without Temporal or an
	// object store, which an import does not use.
	cfg.JWTSecret, cfg.JWKSURL = config.DevJWTSecret, ""
	a, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return 0, "", err
	}
	a.DB = db
	srv, err := a.Server(ctx)
	if err != nil {
		return 0, "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, "", err
	}
	go func() { _ = srv.App.Listener(ln) }()
	defer func() { _ = srv.App.Shutdown() }()
	tok, err := auth.Mint(config.DevJWTSecret, auth.Principal{Subject: "bench", Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		return 0, "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	// A body of known length, written part by part from the file.
	var head, tail strings.Builder
	mw := multipart.NewWriter(&head)
	if err := mw.WriteField("name", "over http"); err != nil {
		return 0, "", err
	}
	if _, err := mw.CreateFormFile("file", "contacts.csv"); err != nil {
		return 0, "", err
	}
	boundary := mw.Boundary()
	tail.WriteString("\r\n--" + boundary + "--\r\n")
	body := io.MultiReader(strings.NewReader(head.String()), f, strings.NewReader(tail.String()))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ln.Addr().String()+"/v4/"+tenant+"/distributionLists/createFromFile", body)
	if err != nil {
		return 0, "", err
	}
	req.ContentLength = int64(head.Len()) + size + int64(tail.Len())
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
	client := &http.Client{Timeout: 30 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return 0, "", fmt.Errorf("createFromFile answered %d: %s", resp.StatusCode, answer)
	}
	var out struct {
		Rows, Created, Skipped int64
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return 0, "", err
	}
	return out.Rows, fmt.Sprintf("(created %d, skipped %d)", out.Created, out.Skipped), nil
}

func explainAll(ctx context.Context, db *storage.DB, tenant string) (string, error) {
	var b strings.Builder
	list, err := benchdata.FirstDistributionList(ctx, db, tenant)
	if err != nil {
		return "", err
	}
	for _, c := range []struct {
		name string
		f    contacts.Filter
	}{
		{"all contacts, first page", contacts.Filter{}},
		{"name prefix", contacts.Filter{Name: "hopp"}},
		{"email", contacts.Filter{Email: "a.4242@example.com"}},
		{"phone", contacts.Filter{Phone: "+15550004242"}},
		{"external id", contacts.Filter{ExternalID: "EMP-0004242"}},
		{"distribution list", contacts.Filter{DistributionListID: list}},
		{"custom field", contacts.Filter{CustomFields: map[string]string{"site": "Site 42"}}},
		{"role", contacts.Filter{Role: "Incident commander"}},
	} {
		start := time.Now()
		if _, _, err := contacts.Find(ctx, db.DB, tenant, c.f, contacts.DefaultOrder+", "+contacts.TieBreak, 25, 0); err != nil {
			return "", err
		}
		took := time.Since(start)
		page, count, err := contacts.Explain(ctx, db.DB, tenant, c.f, 25)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "## %s (findContacts page of 25 with its count: %d ms)\n\n```\n%s\n\n%s\n```\n\n", c.name, took.Milliseconds(), page, count)
	}
	return b.String(), nil
}

func write(dir string, res Result, plans string) error {
	j, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "recipients-import.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Recipients import benchmark\n\n%s; %d rows (%.1f MiB of CSV); %s on %d CPUs; PostgreSQL %s.\n\n",
		res.At.Format(time.RFC3339), res.Rows, float64(res.FileBytes)/(1<<20), res.GoVersion, res.CPUs, res.Postgres)
	md.WriteString("| phase | rows | seconds | rows/s | peak Go heap (MiB) | max RSS (MiB) | notes |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, p := range res.Phases {
		fmt.Fprintf(&md, "| %s | %d | %.1f | %.0f | %.1f | %.1f | %s |\n", p.Name, p.Rows, p.Seconds, p.RowsPerSec, p.PeakHeapMiB, p.MaxRSSMiB, p.Note)
	}
	if res.HTTPRatio > 0 {
		fmt.Fprintf(&md, "\nImport over HTTP / direct import (both into empty tables): %.2f×\n", res.HTTPRatio)
	}
	if res.Load != "" {
		fmt.Fprintf(&md, "\nLoad average at the end (1, 5, 15 min): %s\n", res.Load)
	}
	if err := os.WriteFile(filepath.Join(dir, "recipients-import.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "recipients-explain.md"), []byte("# findContacts plans at "+fmt.Sprint(res.Rows)+" contacts\n\n"+plans), 0o644); err != nil {
		return err
	}
	fmt.Print(md.String())
	fmt.Printf("\nwritten: %s, %s and %s\n", filepath.Join(dir, "recipients-import.json"), filepath.Join(dir, "recipients-import.md"), filepath.Join(dir, "recipients-explain.md"))
	return nil
}
