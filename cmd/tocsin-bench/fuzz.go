package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
)

// fuzzOp is one operation of the API's document.
type fuzzOp struct {
	id, method, path string
	query, headers   []string
	multipart, body  bool
}

// hostile is one request to send: a raw head (and body) written on its
// own connection, so that nothing the client library refuses is left out.
type hostile struct {
	op, kind string
	head     string
	body     []byte
}

// runFuzz starts `tocsin dev` (API and worker in one process) on the test
// services and sends it hostile requests over every operation; it prints
// the status counts per operation and the process's peak RSS. Then it
// holds connections that send half a request head slowly while normal
// requests go on (slowHeadsRun). It fails on any 5xx, on a broken
// /metrics, on a normal request refused or failed beside the slow
// connections, or on a peak RSS over the limit.
func runFuzz(args []string) error {
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	var svc services
	svc.flags(fs, "the tocsin binary, run as `tocsin dev`", "folder for the API's log")
	n := fs.Int("requests", 12000, "hostile requests to send")
	conc := fs.Int("concurrency", 8, "requests in flight")
	rssLimit := fs.Float64("rss-limit-mb", 512, "fail when the API's peak RSS exceeds this")
	slowConns := fs.Int("slow-conns", 2000, "connections sending half a request head slowly, after the hostile requests (0: none)")
	slowFor := fs.Duration("slow-for", 30*time.Second, "how long the slow connections go on")
	slowRate := fs.Int("slow-rate", 20, "normal requests a second beside the slow connections")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()

	_, dsn, drop, err := runSchema(ctx, svc.dbURL, false)
	if err != nil {
		return err
	}
	defer drop()

	apiAddr, metricsAddr := freeAddr(), freeAddr()
	proc, err := svc.start("fuzz-api", svc.env(dsn, "fuzz-"+randomSuffix(), "fuzz",
		"TOCSIN_ENV=development", "TOCSIN_HTTP_ADDR="+apiAddr, "TOCSIN_PUBLIC_URL=http://"+apiAddr,
		"TOCSIN_WORKER_METRICS_ADDR="+metricsAddr, "TOCSIN_LOG_LEVEL=warn"), "dev")
	if err != nil {
		return err
	}
	defer proc.stop()
	base := "http://" + apiAddr
	if err := waitHealthy(ctx, base, proc); err != nil {
		return fmt.Errorf("%w (see %s)", err, svc.logPath("fuzz-api"))
	}

	tenant := strconv.FormatInt(time.Now().UnixNano()%1_000_000_000+1_000_000_000, 10)
	token, err := auth.Mint(config.DevJWTSecret, auth.Principal{Subject: "fuzz", Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		return err
	}
	ops, err := operations(base)
	if err != nil {
		return err
	}
	reqs := hostileRequests(ops, tenant, token)
	fmt.Fprintf(os.Stderr, "%d operations, %d kinds of hostile request; sending %d against %s\n", len(ops), len(reqs), *n, base)

	var (
		mu     sync.Mutex
		counts = map[string]map[int]int{}
		fails  []string
	)
	start := time.Now()
	clients(ctx, *n, *conc, func(i int) {
		h := reqs[(i-1)%len(reqs)]
		status, body, err := exchange(apiAddr, h)
		mu.Lock()
		defer mu.Unlock()
		if counts[h.op] == nil {
			counts[h.op] = map[int]int{}
		}
		counts[h.op][status]++
		if status >= 500 || (err != nil && status == 0) {
			fails = append(fails, fmt.Sprintf("%s %s: %d %v %s", h.op, h.kind, status, err, clipText(body, 300)))
		}
	})
	elapsed := time.Since(start)

	// Both metrics endpoints still parse.
	for _, u := range []string{base + "/metrics", "http://" + metricsAddr + "/metrics"} {
		if err := parseMetrics(u); err != nil {
			fails = append(fails, "metrics "+u+": "+err.Error())
		}
	}
	peak := proc.peakRSS()

	ids := make([]string, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	total := map[int]int{}
	fmt.Printf("%-48s %s\n", "operation", "statuses")
	for _, id := range ids {
		var parts []string
		codes := make([]int, 0, len(counts[id]))
		for c := range counts[id] {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%d×%d", c, counts[id][c]))
			total[c] += counts[id][c]
		}
		fmt.Printf("%-48s %s\n", id, strings.Join(parts, " "))
	}
	codes := make([]int, 0, len(total))
	for c := range total {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var all []string
	for _, c := range codes {
		all = append(all, fmt.Sprintf("%d×%d", c, total[c]))
	}
	fmt.Printf("\n%d requests over %d operations in %.1fs (%.0f/s): %s\n", *n, len(ids), elapsed.Seconds(), float64(*n)/elapsed.Seconds(), strings.Join(all, " "))
	fmt.Printf("API peak RSS (VmHWM): %.0f MB (limit %.0f MB)\n", peak, *rssLimit)
	fmt.Printf("5xx and failures: %d\n", len(fails))
	for i, f := range fails {
		if i == 50 {
			fmt.Printf("  … %d more\n", len(fails)-50)
			break
		}
		fmt.Println("  " + f)
	}
	if *slowConns > 0 {
		slow := slowHeadsRun{addr: apiAddr, token: token, proc: proc, conns: *slowConns, length: *slowFor, rate: *slowRate}.run(ctx)
		for i, f := range slow {
			if i == 20 {
				fmt.Printf("  … %d more\n", len(slow)-20)
				break
			}
			fmt.Println("  " + f)
		}
		fails = append(fails, slow...)
		peak = proc.peakRSS()
	}
	if len(fails) > 0 {
		return fmt.Errorf("%d requests failed or answered 5xx", len(fails))
	}
	if peak > *rssLimit {
		return fmt.Errorf("peak RSS %.0f MB is over %.0f MB", peak, *rssLimit)
	}
	return nil
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitHealthy(ctx context.Context, base string, p *workerProc) error {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return errors.New("tocsin dev exited")
		default:
		}
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
	return errors.New("the API did not become ready within 90s")
}

// operations reads every operation from the served document.
func operations(base string) ([]fuzzOp, error) {
	res, err := http.Get(base + "/openapi.json")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
			RequestBody *struct {
				Content map[string]any `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode the document: %w", err)
	}
	var ops []fuzzOp
	for path, item := range doc.Paths {
		for method, op := range item {
			if op.OperationID == "" {
				continue
			}
			o := fuzzOp{id: op.OperationID, method: strings.ToUpper(method), path: path, body: op.RequestBody != nil}
			if op.RequestBody != nil {
				_, o.multipart = op.RequestBody.Content["multipart/form-data"]
			}
			for _, p := range op.Parameters {
				switch p.In {
				case "query":
					o.query = append(o.query, p.Name)
				case "header":
					o.headers = append(o.headers, p.Name)
				}
			}
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	return ops, nil
}

// hostileRequests builds, for every operation, requests with NUL and
// invalid UTF-8 in path ids, queries, headers and bodies, %00 ids,
// truncated multipart bodies, declared lengths over the limit (headers
// only), deep nesting, huge key counts and odd methods.
func hostileRequests(ops []fuzzOp, tenant, token string) []hostile {
	manyKeys := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("{")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `"k%d":"%s",`, i, "v")
		}
		b.WriteString(`"name":"x"}`)
		return b.Bytes()
	}
	deep := []byte(strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000))
	deepArr := []byte(strings.Repeat("[", 50000) + strings.Repeat("]", 50000))
	keys := manyKeys(20000)
	truncated := []byte("--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\nContent-Type: text/csv\r\n\r\nfirstName,lastName\r\nA,B\r\n")
	bodies := []struct {
		kind string
		body []byte
	}{
		{"NUL in strings", []byte(`{"name":"a\u0000","subject":"\u0000","externalId":"\u0000","description":"\u0000","firstName":"\u0000","url":"\u0000"}`)},
		{"invalid UTF-8", []byte("{\"name\":\"\xff\xfe\",\"subject\":\"\xc3\x28\",\"description\":\"\xed\xa0\x80\"}")},
		{"NUL key", []byte(`{"a\u0000b":1}`)},
		{"deep nesting", deep},
		{"deep arrays", deepArr},
		{"20000 keys", keys},
		{"truncated JSON", []byte(`{"name":"x","subject":`)},
		{"wrong types", []byte(`{"name":[1,{"a":null}],"subject":1e400,"page":-1}`)},
	}
	ids := []string{"%00", "%ff%fe", "a%00b", "..%2f..%2fetc", strings.Repeat("9", 400), "-1", "0x10", "%C0%AE"}
	odd := []string{"POS", "GETT", "BREW", "G\xffT"}
	var out []hostile
	for _, op := range ops {
		path := func(id string) string {
			p := strings.ReplaceAll(op.path, "{tenantId}", tenant)
			for {
				i := strings.IndexByte(p, '{')
				j := strings.IndexByte(p, '}')
				if i < 0 || j < i {
					return p
				}
				p = p[:i] + id + p[j+1:]
			}
		}
		add := func(kind, method, target string, headers []string, body []byte, declared int64) {
			var h strings.Builder
			fmt.Fprintf(&h, "%s %s HTTP/1.1\r\nHost: fuzz\r\nAuthorization: Bearer %s\r\nConnection: close\r\n", method, target, token)
			for i := 0; i+1 < len(headers); i += 2 {
				fmt.Fprintf(&h, "%s: %s\r\n", headers[i], headers[i+1])
			}
			if declared == 0 {
				declared = int64(len(body))
			}
			fmt.Fprintf(&h, "Content-Length: %d\r\n\r\n", declared)
			out = append(out, hostile{op: op.id, kind: kind, head: h.String(), body: body})
		}
		for _, id := range ids {
			add("path id "+id, op.method, path(id), nil, nil, 0)
		}
		for _, q := range op.query {
			add("NUL query "+q, op.method, path("1")+"?"+q+"=%00", nil, nil, 0)
			add("invalid UTF-8 query "+q, op.method, path("1")+"?"+q+"=%ff", nil, nil, 0)
		}
		for _, hd := range op.headers {
			if strings.EqualFold(hd, "Authorization") {
				continue
			}
			add("invalid UTF-8 header "+hd, op.method, path("1"), []string{hd, "a\xffb"}, nil, 0)
		}
		ct := "application/json"
		if op.multipart {
			ct = "multipart/form-data; boundary=b"
			add("truncated multipart", op.method, path("1"), []string{"Content-Type", ct}, truncated, 0)
		}
		for _, b := range bodies {
			add(b.kind, op.method, path("1"), []string{"Content-Type", ct}, b.body, 0)
		}
		add("declared 5 GiB, headers only", op.method, path("1"), []string{"Content-Type", ct}, nil, 5<<30)
		if !op.multipart {
			// Over every JSON and CSV operation's limit.
			add("declared 64 MiB, headers only", op.method, path("1"), []string{"Content-Type", ct}, nil, 64<<20)
		}
		for _, m := range odd {
			add("method "+m, m, path("1"), nil, nil, 0)
		}
	}
	return out
}

// exchange writes h on its own connection and reads the answer's status and
// up to 64 KiB of its body; a body over 64 KiB is reported as a failure.
func exchange(addr string, h hostile) (int, []byte, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, h.head); err != nil {
		return 0, nil, err
	}
	if len(h.body) > 0 {
		// The server may answer and close before reading it all.
		_, _ = conn.Write(h.body)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, fmt.Errorf("no answer: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10+1))
	if len(body) > 64<<10 {
		return 599, body, errors.New("an answer over 64 KiB")
	}
	return res.StatusCode, body, nil
}

func parseMetrics(u string) error {
	res, err := http.Get(u)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 300))
		return fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	_, err = p.TextToMetricFamilies(res.Body)
	return err
}

func clipText(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "?")
}
