package api_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// noDriverText fails when an error body carries database driver, SQL or
// stack text.
func noDriverText(t *testing.T, what string, r stacktest.Response) {
	t.Helper()
	for _, leak := range []string{"pq:", "SQLSTATE", "SELECT ", "INSERT ", "goroutine ", ".go:"} {
		if bytes.Contains(r.Body, []byte(leak)) {
			t.Errorf("%s: the answer carries %q: %s", what, leak, r.Body)
		}
	}
}

func TestThousandsOfUnknownKeysAnswerASmallProblem(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&b, `"unknown%05d":"%s",`, i, strings.Repeat("x", 20))
	}
	b.WriteString(`"subject":"s"}`)
	r := s.Do(t, http.MethodPost, "/v2/alerts/find", tok, []byte(b.String()))
	if r.Status != 400 {
		t.Fatalf("status %d", r.Status)
	}
	if len(r.Body) >= 64<<10 {
		t.Fatalf("a %d-byte problem for a %d-byte request", len(r.Body), b.Len())
	}
	p := problem(t, r)
	if len(p.Errors) == 0 || len(p.Errors) > rest.MaxFailures || len(p.Errors)+p.MoreErrors != 20000 || !strings.HasPrefix(p.Instance, "urn:request:") {
		t.Fatalf("%d errors listed, %d more, instance %q", len(p.Errors), p.MoreErrors, p.Instance)
	}
}

func TestNULAndInvalidUTF8AreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	nulSub, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: "u\x00", Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := "/" + tenant + "/directory/main"
	cases := []struct {
		name, method, path, token string
		body                      any
		headers                   []string
		location                  string
	}{
		{"NUL in a body field", http.MethodPost, "/v2/alerts/find", tok, []byte(`{"subject":"a\u0000b"}`), nil, "body.subject"},
		{"invalid UTF-8 in a body field", http.MethodPost, "/v2/alerts/find", tok, []byte("{\"subject\":\"\xff\"}"), nil, "body.subject"},
		{"NUL in a nested field", http.MethodPost, "/v2/contacts/find", tok, []byte(`{"externalId":"\u0000"}`), nil, "body.externalId"},
		{"NUL in a property name", http.MethodPost, dir + "/users", tok, []byte(`{"firstName":"a","lastName":"b","customFields":{"k\u0000":"v"}}`), nil, "body.customFields"},
		{"invalid UTF-8 in a query", http.MethodGet, "/v3/user/alerts/sent?from=%ff", tok, nil, nil, "query.from"},
		{"NUL in a query", http.MethodGet, "/v3/user/alerts/sent?incident=%00", tok, nil, nil, "query.incident"},
		{"NUL in a path id", http.MethodGet, dir + "/users/%00", tok, nil, nil, "path.userId"},
		{"a property given twice", http.MethodPost, "/v2/alerts/find", tok, []byte(`{"subject":"a","subject":"b"}`), nil, "body.subject"},
		{"a nested property given twice", http.MethodPost, "/v2/alerts", tok, []byte(`{"settings":{"message":{"subject":"a","body":"x","subject":"b"}}}`), nil, "body.settings.message.subject"},
		{"NUL in the tenant id", http.MethodGet, "/v4/" + tenant + "%00/distributionLists", tok, nil, nil, "path.tenantId"},
		{"invalid UTF-8 in the tenant id", http.MethodGet, "/" + tenant + "%ff/directory/main/users/1", tok, nil, nil, "path.tenantId"},
		{"invalid UTF-8 in a path id", http.MethodGet, dir + "/users/%ff%fe", tok, nil, nil, "path.userId"},
		{"invalid UTF-8 in a header", http.MethodPost, "/v2/alerts", tok, []byte(`{}`), []string{"Idempotency-Key", "k\xff"}, "header.Idempotency-Key"},
		{"NUL in a token claim", http.MethodGet, "/v3/user/alerts/sent", nulSub, nil, nil, "header.Authorization"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, c.method, c.path, c.token, c.body, c.headers...)
			noDriverText(t, c.name, r)
			if r.Status != 400 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			p := problem(t, r)
			if len(p.Errors) == 0 || !strings.HasPrefix(p.Errors[0].Location, c.location) || p.Instance == "" {
				t.Fatalf("problem %s does not name %s", r.Body, c.location)
			}
		})
	}
}

func TestTenantClaimMustBeCanonical(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	for _, tenant := range []string{"abc", "04001", "4001 ", "-1"} {
		tok, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: "u", Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Do(t, http.MethodGet, "/ops/whoami", tok, nil)
		if r.Status != 401 || !strings.Contains(problem(t, r).Detail, "tenant claim") {
			t.Fatalf("tenant %q: %d %s", tenant, r.Status, r.Body)
		}
	}
}

// rawExchange sends head (a request without its body) on a fresh
// connection and reads the answer, which must come without the body.
func rawExchange(t *testing.T, s *stacktest.Stack, head string) (*http.Response, []byte) {
	t.Helper()
	conn, _, res := rawRequest(t, s, head)
	defer conn.Close()
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

// rawRequest writes head on a new connection and reads the answer's header;
// the connection is the caller's to close.
func rawRequest(t *testing.T, s *stacktest.Stack, head string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		t.Fatalf("no answer before the body: %v", err)
	}
	return conn, br, res
}

func TestDeclaredOversizeIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	cases := map[string]string{
		"5 GiB to a JSON operation":        "POST /v2/alerts/find HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 5368709120\r\n",
		"2 MiB to a JSON operation":        "POST /v2/alerts/find HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n",
		"30 MiB to an upload":              "POST /v4/" + tenant + "/files HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 31457280\r\n",
		"a body to an operation with none": "GET /v3/user/alerts/sent HTTP/1.1\r\nContent-Length: 10\r\n",
		"with Expect: 100-continue":        "PUT /v2/settings/channels/voice HTTP/1.1\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 5368709120\r\n",
	}
	for name, head := range cases {
		t.Run(name, func(t *testing.T) {
			res, body := rawExchange(t, s, head+"Host: x\r\nAuthorization: Bearer "+tok+"\r\n\r\n")
			if res.StatusCode != 413 {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			if !res.Close {
				t.Error("the connection stays open after a refused body")
			}
			p := problem(t, stacktest.Response{Status: res.StatusCode, Header: res.Header, Body: body})
			if p.Instance == "" {
				t.Errorf("no instance: %s", body)
			}
		})
	}
	// A smuggled marker header does not make a small request oversize.
	r := s.Do(t, http.MethodPost, "/v2/alerts/find", tok, []byte(`{}`), "X-Tocsin-Declared-Length", "1")
	if r.Status != 200 {
		t.Fatalf("find with a marker header: %d %s", r.Status, r.Body)
	}
}

func TestTruncatedMultipartImportIsABadRequest(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	body := "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nlist\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.csv\"\r\nContent-Type: text/csv\r\n\r\n" +
		"firstName,lastName,emails\r\nAda,Lovelace,ada@example.com\r\n"
	r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/distributionLists/createFromFile", tok, strings.NewReader(body),
		"Content-Type", "multipart/form-data; boundary=b")
	noDriverText(t, "truncated import", r)
	if r.Status != 400 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	problem(t, r)
}

func TestEveryProblemCarriesItsInstance(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	groups := "/" + tenant + "/directory/main/groups"
	group := map[string]any{"name": "dup"}
	if r := s.Do(t, http.MethodPost, groups, tok, group); r.Status >= 300 {
		t.Fatalf("create group: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		method, path, token string
		body                any
		want                int
	}{
		{http.MethodGet, "/v2/alerts/999999999", tok, nil, 404},
		{http.MethodGet, "/no/such/route", "", nil, 404},
		{http.MethodGet, "/v4/42/files/a.png", tok, nil, 404},
		{http.MethodPost, "/v2/alerts/find?pageSize=-1", tok, []byte(`{}`), 400},
		{http.MethodGet, "/v3/user/alerts/sent", "", nil, 401},
		{http.MethodPost, groups, tok, group, 409},
		{http.MethodPost, "/ops/smoke", tok, []byte(`{}`), 413},
	} {
		r := s.Do(t, c.method, c.path, c.token, c.body)
		if r.Status != c.want {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.Status, c.want, r.Body)
			continue
		}
		if p := problem(t, r); !strings.HasPrefix(p.Instance, "urn:request:") || r.Header.Get("X-Request-Id") == "" ||
			p.Instance != "urn:request:"+r.Header.Get("X-Request-Id") {
			t.Errorf("%s %s: instance %q, request id %q", c.method, c.path, p.Instance, r.Header.Get("X-Request-Id"))
		}
	}
}

func TestClientRequestIDsAreKeptOnlyWhenPlain(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	r := s.Do(t, http.MethodGet, "/no/such/route", "", nil, "X-Request-Id", "trace-42.a:b_c")
	if p := problem(t, r); p.Instance != "urn:request:trace-42.a:b_c" {
		t.Fatalf("plain id not kept: %q", p.Instance)
	}
	for _, odd := range []string{"a b", "a\xffb", strings.Repeat("x", 200), "<script>"} {
		r := s.Do(t, http.MethodGet, "/no/such/route", "", nil, "X-Request-Id", odd)
		if p := problem(t, r); strings.Contains(p.Instance, odd) || len(p.Instance) > 100 {
			t.Fatalf("odd id %q kept: %q", odd, p.Instance)
		}
	}
}

func TestProviderURLRefusedAtSave(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	for _, u := range []string{"http://127.0.0.1:9/x", "https://127.0.0.1/x", "https://10.0.0.8/", "https://[::1]/", "https://169.254.169.254/latest/meta-data"} {
		r := s.Do(t, http.MethodPut, "/v2/settings/channels/voice", tok, map[string]any{
			"providers": []map[string]any{{"url": u, "token": "t", "from": "+15550001000", "signingSecret": "0123456789abcdef"}},
		})
		if r.Status != 400 {
			t.Fatalf("%s: %d %s", u, r.Status, r.Body)
		}
		if p := problem(t, r); len(p.Errors) != 1 || p.Errors[0].Location != "body.providers[0].url" {
			t.Fatalf("%s: %s", u, r.Body)
		}
	}
}

// TestMetricsSurviveVariedTraffic drives every route, odd methods and 404s,
// then parses the API's /metrics and the worker's registry (as the worker
// serves it) with the Prometheus text parser.
func TestMetricsSurviveVariedTraffic(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	doc := s.Do(t, http.MethodGet, "/openapi.json", "", nil)
	var spec struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	doc.JSON(t, &spec)
	fill := strings.NewReplacer("{tenantId}", tenant, "{", "x", "}", "")
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "POS", "GETT", "G\xffT", "HEAD", "OPTIONS"}
	client := &http.Client{Timeout: 10 * time.Second}
	n := 0
	for path := range spec.Paths {
		for i, m := range methods {
			if (n+i)%3 != 0 && m != "POS" && m != "GETT" {
				continue
			}
			req, err := http.NewRequest(m, s.URL+fill.Replace(path), strings.NewReader(`{"subject":"x"}`))
			if err != nil {
				continue // the client refuses this method
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Content-Type", "application/json")
			if res, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			n++
		}
	}
	for _, m := range []string{"POS", "GETT", "BREW", "G\xffT"} {
		for _, path := range []string{"/no/such/route", "/v2/alerts/find", "/metrics"} {
			// Whatever the server answers (or not), it must keep its metrics.
			_, _ = rawExchangeNoFail(s, m+" "+path+" HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
		}
	}
	parse := func(what string, body []byte) {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(families) == 0 {
			t.Fatalf("%s: no metrics", what)
		}
	}
	r := s.Do(t, http.MethodGet, "/metrics", "", nil)
	if r.Status != 200 {
		t.Fatalf("API /metrics %d: %s", r.Status, r.Body)
	}
	parse("API /metrics", r.Body)
	if !bytes.Contains(r.Body, []byte(`method="OTHER"`)) {
		t.Error("odd methods are not counted as OTHER")
	}
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(s.Metrics, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("worker /metrics %d: %s", rec.Code, rec.Body)
	}
	parse("worker /metrics", rec.Body.Bytes())
}

func rawExchangeNoFail(s *stacktest.Stack, head string) (int, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

// TestRefusedBodiesHoldBoundedConnections checks that the connections kept
// open to read refused bodies are bounded: a client that declares an
// oversize body and never sends it holds its connection for a while, but
// past the bound the server closes refused connections at once. It does not
// run in parallel, so no other test's refusals take the slots it counts.
func TestRefusedBodiesHoldBoundedConnections(t *testing.T) {
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	const opened, bound = 72, 64
	head := "POST /v2/alerts/find HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tok +
		"\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n"
	conns := make([]net.Conn, opened)
	readers := make([]*bufio.Reader, opened)
	for i := range conns {
		conn, br, res := rawRequest(t, s, head)
		defer conn.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 413 {
			t.Fatalf("connection %d: status %d", i, res.StatusCode)
		}
		conns[i], readers[i] = conn, br
	}
	// A connection still open half a second after its answer is being read
	// for its body; one the server closed reads EOF at once.
	lingering := make([]bool, opened)
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Go(func() {
			_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			_, err := readers[i].ReadByte()
			var ne net.Error
			lingering[i] = errors.As(err, &ne) && ne.Timeout()
		})
	}
	wg.Wait()
	n := 0
	for _, l := range lingering {
		if l {
			n++
		}
	}
	if !lingering[0] {
		t.Error("the first refused connection was closed at once: the server does not read refused bodies")
	}
	if n > bound {
		t.Errorf("%d refused connections held open at once, more than %d", n, bound)
	}
	if n == opened {
		t.Errorf("all %d refused connections held open: nothing bounds them", opened)
	}
}

// TestUnreadableHeaderAnswerQuotesNothing sends heads fasthttp cannot parse
// (a control character or NUL in a header value) with a bearer token and a
// cookie: the 400 problem says what is wrong without quoting the request.
func TestUnreadableHeaderAnswerQuotesNothing(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	for name, bad := range map[string]string{"control character": "X-Foo: a\x01b", "NUL": "Idempotency-Key: a\x00b"} {
		t.Run(name, func(t *testing.T) {
			res, body := rawExchange(t, s, "GET /v2/alerts/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+tok+
				"\r\n"+bad+"\r\nCookie: session=SECRET123\r\n\r\n")
			if res.StatusCode != 400 {
				t.Fatalf("status %d: %s", res.StatusCode, body)
			}
			for _, secret := range []string{tok, "SECRET123", "Bearer", "Cookie"} {
				if strings.Contains(string(body), secret) {
					t.Fatalf("the answer quotes %q: %s", secret, body)
				}
			}
			p := problem(t, stacktest.Response{Status: res.StatusCode, Header: res.Header, Body: body})
			if p.Instance == "" || res.Header.Get("X-Request-Id") == "" || !strings.Contains(p.Detail, "header") {
				t.Fatalf("instance %q, request id %q, detail %q", p.Instance, res.Header.Get("X-Request-Id"), p.Detail)
			}
		})
	}
}

func TestValuesThatDoNotFitTheirFieldAreNamed(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	alert := func(recipients, extra string) []byte {
		return []byte(`{"settings":{"message":{"subject":"a","body":"x"},"recipients":` + recipients + extra + `}}`)
	}
	cases := []struct {
		name, path string
		body       []byte
		location   string
		message    string // a part the message must hold
	}{
		{"an unknown alert type", "/v2/alerts", []byte(`{"settings":{"type":"Bogus","message":{"subject":"a","body":"x"},"recipients":{"contactIds":[2]}}}`), "body.settings.type", "Conference"},
		{"an unknown event type", "/v2/settings/subscriptions", []byte(`{"url":"https://example.com/h","eventTypes":["alert.exploded"]}`), "body.eventTypes[0]", "alert."},
		{"an unknown status filter", "/v2/alerts/find", []byte(`{"statuses":["Exploded"]}`), "body.statuses[0]", "one of"},
		{"an id beyond int64", "/v2/alerts", alert(`{"contactIds":[2,99999999999999999999]}`, ""), "body.settings.recipients.contactIds[1]", "9223372036854775807"},
		{"a fraction in exponent form", "/v2/alerts", alert(`{"contactIds":[2]}`, `,"workflow":{"cycles":15e-1}`), "body.settings.workflow.cycles", "integer"},
		{"a number beyond float64", "/v2/alerts", alert(`{"contactIds":[2]}`, `,"workflow":{"cycles":1e400}`), "body.settings.workflow.cycles", "number"},
		{"a filter id beyond int64", "/v2/alerts/find", []byte(`{"ids":[1, 99999999999999999999]}`), "body.ids[1]", "integer"},
		{"a filter id in exponent form beyond int64", "/v2/alerts/find", []byte(`{"ids":[1e19]}`), "body.ids[0]", "9223372036854775807"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, http.MethodPost, c.path, tok, c.body)
			if r.Status != 400 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			p := problem(t, r)
			if len(p.Errors) != 1 {
				t.Fatalf("want one failure at %s: %s", c.location, r.Body)
			}
			f := p.Errors[0]
			if f.Location != c.location || f.PropertyName != strings.TrimPrefix(c.location, "body.") {
				t.Errorf("failure at %q (%q), want %s: %s", f.Location, f.PropertyName, c.location, r.Body)
			}
			if !strings.Contains(f.ErrorMessage, c.message) {
				t.Errorf("message %q does not hold %q", f.ErrorMessage, c.message)
			}
			for _, goText := range []string{"Go ", "int64", "float64", "json:", "struct"} {
				if strings.Contains(f.ErrorMessage, goText) {
					t.Errorf("message %q carries %q", f.ErrorMessage, goText)
				}
			}
		})
	}
}

// TestUnexpectedPropertyEchoesItsOwnValue: a property a body may not hold
// is named by its path, and the value echoed is its own, not the object's
// that holds it.
func TestUnexpectedPropertyEchoesItsOwnValue(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	cases := []struct {
		name, path string
		body       string
		location   string
		value      any
	}{
		{"a string at the top", "/v2/alerts/find", `{"subject":"a","bogus":"val","ids":[1,2]}`, "body.bogus", "val"},
		{"a number deep inside", "/v2/alerts", `{"settings":{"message":{"subject":"a","body":"b","x":7},"recipients":{"contactIds":[2]}}}`, "body.settings.message.x", 7.0},
		{"an object", "/v2/alerts/find", `{"subject":"a","bogus":{"q":1}}`, "body.bogus", "an object of 1 properties"},
		{"a name holding a dot", "/v2/alerts/find", `{"subject":"a","b":1,"x.b":true}`, "body.x.b", true},
		{"null", "/v2/alerts/find", `{"subject":"a","ids":[1],"bogus":null}`, "body.bogus", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, http.MethodPost, c.path, tok, []byte(c.body))
			if r.Status != 400 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			var found bool
			for _, f := range problem(t, r).Errors {
				if f.Location != c.location {
					continue
				}
				found = true
				if f.PropertyName != strings.TrimPrefix(c.location, "body.") || f.ErrorMessage != "unexpected property" || f.AttemptedValue != c.value {
					t.Errorf("failure %+v, want property %s with value %#v", f, c.location, c.value)
				}
			}
			if !found {
				t.Fatalf("no failure at %s: %s", c.location, r.Body)
			}
		})
	}
}

// TestWholeNumbersAreIntegersHoweverWritten: a JSON number is a number, so
// a whole one written with a fraction or an exponent fills an integer field
// anywhere in the API, as the schema's integer type allows; a number with a
// fraction is refused naming its field.
func TestWholeNumbersAreIntegersHoweverWritten(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	defaults := func(workflow string) []byte {
		return []byte(`{"type":"Default","priority":"Emergency","channels":["text"],"loudTone":true,"sender":{},"workflow":` + workflow + `}`)
	}
	r := s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, defaults(`{"cycles":2.0,"cycleIntervalMinutes":1.5e1}`))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"cycles":2,`) || !strings.Contains(string(r.Body), `"cycleIntervalMinutes":15`) {
		t.Fatalf("cycles 2.0, interval 1.5e1: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPost, "/v2/alerts/find", tok, []byte(`{"ids":[1.0,1e3,10000E-4]}`)); r.Status != 200 {
		t.Fatalf("ids 1.0, 1e3, 10000E-4: %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, defaults(`{"cycles":1.5}`))
	if r.Status != 400 {
		t.Fatalf("cycles 1.5: %d %s", r.Status, r.Body)
	}
	if p := problem(t, r); len(p.Errors) != 1 || p.Errors[0].Location != "body.workflow.cycles" || p.Errors[0].ErrorMessage != "expected integer" {
		t.Fatalf("cycles 1.5: %s", r.Body)
	}
}

// TestPropertyNamesDifferingOnlyInCaseAreOneProperty: encoding/json gives
// a struct field the last of such names while validation looked at the
// first, so two of them in an object that decodes into a struct are a 400
// naming the second, in a JSON body and in the JSON alert part of a form.
// The keys of a map are data whose case matters (custom fields, GeoJSON
// properties from GIS exports), and are taken. (Hook headers ignore case,
// as HTTP does: the subscription refuses such a pair itself, see
// api/subscriptions.)
func TestPropertyNamesDifferingOnlyInCaseAreOneProperty(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	settings := func(message, areas string) string {
		return `{"message":` + message + `,"recipients":{"adHoc":[{"email":"x@example.com"}]` + areas + `}}`
	}
	preview := func(message string) []byte {
		return []byte(`{"settings":` + settings(message, "") + `}`)
	}
	form := func(alert string) io.Reader {
		return strings.NewReader("--b\r\nContent-Disposition: form-data; name=\"alert\"\r\n\r\n" + alert + "\r\n--b--\r\n")
	}
	// Without the second spelling the same bodies are taken, a name in
	// another case as the property.
	if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, preview(`{"Subject":"first","body":"b"}`)); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"subject":"first"`) {
		t.Fatalf("preview: %d %s", r.Status, r.Body)
	}
	// Map keys in two cases are two keys.
	if r := s.Do(t, http.MethodPost, "/v2/contacts/find", tok, []byte(`{"customFields":{"Building":"A","building":"B"}}`)); r.Status != 200 {
		t.Fatalf("custom fields in two cases: %d %s", r.Status, r.Body)
	}
	area := `,"areas":[{"name":"zone","geometry":{"type":"FeatureCollection","features":[{"type":"Feature",` +
		`"geometry":{"type":"Polygon","coordinates":[[[-87.7,41.8],[-87.6,41.8],[-87.6,41.9],[-87.7,41.9],[-87.7,41.8]]]},` +
		`"properties":{"NAME":"North","Name":"north","attrs":{"Zone":1,"zone":2}}}]}}]`
	if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, []byte(`{"settings":`+settings(`{"subject":"s","body":"b"}`, area)+`}`)); r.Status != 200 {
		t.Fatalf("GeoJSON properties in two cases: %d %s", r.Status, r.Body)
	}
	cases := []struct {
		name, method, path string
		body               any
		location, message  string
	}{
		{"a message subject", http.MethodPost, "/v2/alerts/preview", preview(`{"subject":"first","Subject":"second","body":"b"}`),
			"body.settings.message.Subject", `as "subject" and as "Subject"`},
		{"a find filter", http.MethodPost, "/v2/contacts/find", []byte(`{"name":"a","NAME":"b"}`), "body.NAME", "differ only in case"},
		{"a long s", http.MethodPost, "/v2/alerts/find", []byte(`{"subject":"a","\u017fubject":"b"}`), "body.\u017fubject", "differ only in case"},
		{"an escaped spelling", http.MethodPost, "/v2/alerts/find", []byte(`{"subject":"a","\u0053ubject":"b"}`), "body.Subject", "differ only in case"},
		{"a struct inside a map's neighbour", http.MethodPost, "/v2/alerts/preview",
			[]byte(`{"settings":` + settings(`{"subject":"s","body":"b"}`, `,"areas":[{"name":"a","NAME":"b"}]`) + `}`),
			"body.settings.recipients.areas[0].NAME", "differ only in case"},
		{"the alert part of a form", http.MethodPost, "/v2/alertsWithAttachments",
			form(`{"settings":` + settings(`{"subject":"first","Subject":"second","body":"b"}`, "") + `}`),
			"body.alert.settings.message.Subject", "differ only in case"},
		{"a custom field given twice", http.MethodPost, "/v2/contacts/find", []byte(`{"customFields":{"building":"A","building":"B"}}`),
			"body.customFields.building", "is given more than once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var headers []string
			if _, ok := c.body.(io.Reader); ok {
				headers = []string{"Content-Type", "multipart/form-data; boundary=b"}
			}
			r := s.Do(t, c.method, c.path, tok, c.body, headers...)
			if r.Status != 400 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			p := problem(t, r)
			if len(p.Errors) != 1 || p.Errors[0].Location != c.location || !strings.Contains(p.Errors[0].ErrorMessage, c.message) {
				t.Fatalf("problem %s does not name %s (%s)", r.Body, c.location, c.message)
			}
		})
	}
}

// TestAMissingPropertyIsNamed: a required property left out is a failure
// at the property, not at the object that lacks it.
func TestAMissingPropertyIsNamed(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	cases := []struct {
		name, method, path string
		body               []byte
		location           string
	}{
		{"a subscription without url", http.MethodPut, "/v2/settings/subscriptions/1", []byte(`{"eventTypes":["file.uploaded"]}`), "body.url"},
		{"a new subscription without event types", http.MethodPost, "/v2/settings/subscriptions", []byte(`{"url":"https://hooks.example.com/h"}`), "body.eventTypes"},
		{"a message without body", http.MethodPost, "/v2/alerts/preview", []byte(`{"settings":{"message":{"subject":"s"},"recipients":{"adHoc":[{"email":"x@example.com"}]}}}`), "body.settings.message.body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, c.method, c.path, tok, c.body)
			if r.Status != 400 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			p := problem(t, r)
			for _, f := range p.Errors {
				if f.Location == c.location && f.PropertyName == strings.TrimPrefix(c.location, "body.") {
					if f.AttemptedValue != nil {
						t.Errorf("a missing property with an attempted value: %s", r.Body)
					}
					return
				}
			}
			t.Fatalf("problem %s does not name %s", r.Body, c.location)
		})
	}
}

// TestARepeatedQueryParameterIsRefused: huma reads the first of repeated
// query values, so a parameter given twice is a 400 naming it; a list is
// given once, comma-separated, as the document says (explode: false).
func TestARepeatedQueryParameterIsRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	const results = "/v2/alerts/1/results/recipients"
	// Given once, the same parameters reach the operation (no such alert).
	for _, q := range []string{"?recipientIds=1,2", "?sort=firstName", "?recipientIds=1&sort=firstName&page=1"} {
		if r := s.Do(t, http.MethodGet, results+q, tok, nil); r.Status != 404 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	cases := []struct{ query, location, message string }{
		{"?recipientIds=1&recipientIds=2", "query.recipientIds", "separated by commas"},
		{"?sort=firstName&sort=bogus", "query.sort", "more than once"},
		{"?page=1&pageSize=10&page=2", "query.page", "more than once"},
		{"?sort=firstName&sort=", "query.sort", "more than once"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			r := s.Do(t, http.MethodGet, results+c.query, tok, nil)
			if r.Status != 400 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			p := problem(t, r)
			if len(p.Errors) != 1 || p.Errors[0].Location != c.location || !strings.Contains(p.Errors[0].ErrorMessage, c.message) {
				t.Fatalf("problem %s does not name %s (%s)", r.Body, c.location, c.message)
			}
		})
	}
	if r := s.Do(t, http.MethodGet, "/v3/user/alerts/sent?alertCompletion=Sent&alertCompletion=Failed", tok, nil); r.Status != 400 ||
		problem(t, r).Errors[0].Location != "query.alertCompletion" {
		t.Fatalf("a repeated list filter: %d %s", r.Status, r.Body)
	}
}

// TestABodyHumaReadsAsJSONIsCheckedAsJSON: huma decodes a body without
// Content-Type, or whose type is empty before a ";" or after a "+", as
// JSON, so such a body gets every check a JSON body gets.
func TestABodyHumaReadsAsJSONIsCheckedAsJSON(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	preview := func(message string) io.Reader {
		return strings.NewReader(`{"settings":{"message":` + message + `,"recipients":{"adHoc":[{"email":"x@example.com"}]}}}`)
	}
	for _, ct := range []string{"", "; charset=utf-8", "text/plain+"} {
		var headers []string
		if ct != "" {
			headers = []string{"Content-Type", ct}
		}
		// huma takes such a body.
		if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, preview(`{"subject":"s","body":"b"}`), headers...); r.Status != 200 {
			t.Fatalf("content type %q: %d %s", ct, r.Status, r.Body)
		}
		for _, c := range []struct{ message, location string }{
			{`{"subject":"first","Subject":"second","body":"b"}`, "body.settings.message.Subject"},
			{`{"subject":"s","body":"b\u0000"}`, "body.settings.message.body"},
		} {
			r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, preview(c.message), headers...)
			if r.Status != 400 {
				t.Fatalf("content type %q, %s: %d %s", ct, c.message, r.Status, r.Body)
			}
			if p := problem(t, r); len(p.Errors) != 1 || p.Errors[0].Location != c.location {
				t.Fatalf("content type %q: problem %s does not name %s", ct, r.Body, c.location)
			}
		}
	}
}
