package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// slowHeadsRun is the fuzz phase of slow clients: conns connections, each
// sending half a request head and then a header byte a second, opening
// again when the server cuts it off, for the length of the phase; beside
// them normal requests go out at rate a second, each on a connection of
// its own.
type slowHeadsRun struct {
	addr, token string
	proc        *workerProc
	conns       int
	length      time.Duration
	rate        int
}

// slowHalfHead is what a slow connection sends at once: a request line and
// the start of a header it never finishes.
const slowHalfHead = "POST /v2/alerts/find HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\nX-Slow: "

// run prints what the slow connections were answered, the normal requests'
// statuses and latency, the API's resident set before and at its peak
// during the phase and the most connections it held; it returns the normal
// requests that failed or were refused.
func (r slowHeadsRun) run(ctx context.Context) []string {
	base := "http://" + r.addr
	fmt.Printf("\nslow heads: %d connections, each sending half a request head and then a header byte a second, for %s; %d normal requests a second beside them\n",
		r.conns, r.length, r.rate)
	rssBefore := r.proc.rss()
	phase, cancel := context.WithTimeout(ctx, r.length)
	defer cancel()

	var (
		mu         sync.Mutex
		answers    = map[int]int{}
		opened     atomic.Int64
		unopened   atomic.Int64
		unanswered atomic.Int64
		slow       sync.WaitGroup
	)
	// Started over two seconds, so their timeouts do not all fall together.
	const ramp = 2 * time.Second
	for i := range r.conns {
		slow.Go(func() {
			if sleep(phase, ramp*time.Duration(i)/time.Duration(r.conns)) != nil {
				return
			}
			for phase.Err() == nil {
				status, err := slowHead(phase, r.addr)
				switch {
				case errors.Is(err, errNotOpened):
					unopened.Add(1)
					_ = sleep(phase, time.Second)
					continue
				case status > 0:
					mu.Lock()
					answers[status]++
					mu.Unlock()
				case phase.Err() == nil:
					unanswered.Add(1)
				}
				opened.Add(1)
			}
		})
	}

	var (
		latencies []float64
		statuses  = map[int]int{}
		fails     []string
		normal    sync.WaitGroup
		peakRSS   float64
		peakConns int64
	)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(time.Second / time.Duration(r.rate))
	defer tick.Stop()
	sample := time.NewTicker(250 * time.Millisecond)
	defer sample.Stop()
	for phase.Err() == nil {
		select {
		case <-phase.Done():
		case <-sample.C:
			normal.Go(func() {
				mb, n := r.proc.rss(), heldConnections(client, base)
				mu.Lock()
				defer mu.Unlock()
				peakRSS, peakConns = max(peakRSS, mb), max(peakConns, n)
			})
		case <-tick.C:
			normal.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v2/alerts/find", strings.NewReader("{}"))
				req.Header.Set("Authorization", "Bearer "+r.token)
				req.Header.Set("Content-Type", "application/json")
				start := time.Now()
				res, err := client.Do(req)
				status := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					status = res.StatusCode
				}
				ms := float64(time.Since(start).Microseconds()) / 1000
				mu.Lock()
				defer mu.Unlock()
				latencies = append(latencies, ms)
				statuses[status]++
				if err != nil || status != http.StatusOK {
					fails = append(fails, fmt.Sprintf("normal request beside slow heads: %d %v", status, err))
				}
			})
		}
	}
	slow.Wait()
	normal.Wait()

	sort.Float64s(latencies)
	fmt.Printf("  slow connections: %d opened, answered %s, closed unanswered %d, refused (503) %d, not opened %d\n",
		opened.Load(), countsText(answers), unanswered.Load(), answers[http.StatusServiceUnavailable], unopened.Load())
	fmt.Printf("  normal requests: %d — %s; refused (503) %d, failed %d; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
		len(latencies), countsText(statuses), statuses[http.StatusServiceUnavailable], len(fails),
		percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 1))
	fmt.Printf("  API RSS: %.0f MB before, peak %.0f MB during; at most %d connections held at once\n",
		rssBefore, peakRSS, peakConns)
	return fails
}

var errNotOpened = errors.New("the connection could not be opened")

// slowHead opens a connection, sends slowHalfHead and then a header byte
// a second until the server answers or closes it, or ctx ends. It returns
// the answer's status, or 0.
func slowHead(ctx context.Context, addr string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNotOpened, err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, slowHalfHead); err != nil {
		return 0, err
	}
	br := bufio.NewReader(conn)
	for ctx.Err() == nil {
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		_, err := br.Peek(1)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if _, err := io.WriteString(conn, "a"); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	return 0, ctx.Err()
}

var heldConnectionsLine = regexp.MustCompile(`(?m)^tocsin_http_connections (\S+)$`)

// heldConnections reads the connections the API holds from its /metrics
// (the scrape's own included), or -1.
func heldConnections(client *http.Client, base string) int64 {
	res, err := client.Get(base + "/metrics")
	if err != nil {
		return -1
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := heldConnectionsLine.FindSubmatch(b)
	if m == nil {
		return -1
	}
	n, _ := strconv.ParseFloat(string(m[1]), 64)
	return int64(n)
}

// countsText writes status counts as "200×12 408×3", or "none".
func countsText(counts map[int]int) string {
	codes := make([]int, 0, len(counts))
	for c := range counts {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", c, counts[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
