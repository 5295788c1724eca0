package api_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestConnectionsOverTheCapAreRefused holds TOCSIN_HTTP_MAX_CONNS idle
// connections open: the next connection is answered 503 and closed at
// once, and once the idle ones close a request is served again.
func TestConnectionsOverTheCapAreRefused(t *testing.T) {
	t.Parallel()
	const maxConns = 4
	s := stacktest.StartAPI(t, func(c *config.Config) {
		c.HTTPMaxConns = maxConns
		c.HTTPHeaderTimeout = time.Minute // the idle connections outlast the test
	})
	addr := strings.TrimPrefix(s.URL, "http://")
	idle := make([]net.Conn, maxConns)
	for i := range idle {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		idle[i] = conn
	}

	// The server accepts connections in turn, so this one comes after the
	// idle ones hold every slot. It is answered before it sends anything.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("connection %d got no answer: %v", maxConns+1, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || !res.Close || res.Header.Get("Content-Type") != "text/plain" ||
		!strings.Contains(string(body), "limit exceeded") {
		t.Fatalf("connection %d: %d, close %v, %q: %s", maxConns+1, res.StatusCode, res.Close, res.Header.Get("Content-Type"), body)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the refused connection is still open: %v", err)
	}

	for _, c := range idle {
		c.Close()
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) (int, string) {
		res, err := client.Get(s.URL + path)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	stacktest.Eventually(t, 30*time.Second, "a request served once the idle connections closed", func() bool {
		status, _ := get("/healthz")
		return status == http.StatusOK
	})
	// The requests Eventually sent before the server saw the idle
	// connections close may have been refused as well.
	status, metrics := get("/metrics")
	if status != http.StatusOK || !regexp.MustCompile(`\ntocsin_http_connections_refused_total [1-9]`).MatchString(metrics) {
		t.Errorf("metrics %d count no refused connection:\n%s", status, metrics)
	}
}

// TestRequestHeadHasItsOwnTimeout sends half a request head and stops: the
// server answers 408 once TOCSIN_HTTP_HEADER_TIMEOUT passes, not after the
// minute a body may take. A body that arrives slower than the head timeout
// is still read.
func TestRequestHeadHasItsOwnTimeout(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t, func(c *config.Config) { c.HTTPHeaderTimeout = time.Second })
	_, tok := s.NewTenant(t)
	addr := strings.TrimPrefix(s.URL, "http://")

	t.Run("half a head", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		_ = conn.SetDeadline(start.Add(10 * time.Second))
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer within 10 s: %v", err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusRequestTimeout || time.Since(start) > 5*time.Second {
			t.Fatalf("after %s: %d %s", time.Since(start), res.StatusCode, body)
		}
		problem(t, stacktest.Response{Status: res.StatusCode, Header: res.Header, Body: body})
	})

	t.Run("slow body", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		body := `{"subject":"slow"}`
		head := "POST /v2/alerts/find HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tok +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if _, err := io.WriteString(conn, head+body[:5]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond)
		if _, err := io.WriteString(conn, body[5:]); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("a body slower than the head timeout: %d %s", res.StatusCode, b)
		}
	})
}
