package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

func problem(t *testing.T, r stacktest.Response) rest.ProblemDetails {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("content type %q, want application/problem+json (body %s)", ct, r.Body)
	}
	var p rest.ProblemDetails
	r.JSON(t, &p)
	if p.Status != r.Status || p.Title == "" || p.Type == "" {
		t.Fatalf("incomplete problem %s for status %d", r.Body, r.Status)
	}
	return p
}

func TestAuthTenantAndScope(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, good := s.NewTenant(t)
	expired, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: "u", Tenant: tenant, Scopes: auth.AllScopes}, -time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := auth.Mint("another secret", auth.Principal{Subject: "u", Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	noTenant, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: "u", Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	filesPath := fmt.Sprintf("/v4/%s/files/logo.png", tenant)
	cases := []struct {
		name, token, path string
		want              int
		detail            string
	}{
		{"no token", "", filesPath, 401, "Bearer token is required"},
		{"garbage token", "not-a-jwt", filesPath, 401, "invalid token"},
		{"expired token", expired, filesPath, 401, "expired"},
		{"wrong signature", forged, filesPath, 401, "signature"},
		{"no tenant claim", noTenant, filesPath, 401, "tenant claim"},
		{"another tenant's path", good, "/v4/42/files/logo.png", 404, "not found"},
		{"missing scope", s.Token(t, tenant, auth.ScopeTamarack), filesPath, 403, "scope content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Do(t, http.MethodGet, c.path, c.token, nil)
			if r.Status != c.want {
				t.Fatalf("status %d, want %d: %s", r.Status, c.want, r.Body)
			}
			if p := problem(t, r); !strings.Contains(p.Detail, c.detail) {
				t.Fatalf("detail %q does not mention %q", p.Detail, c.detail)
			}
			if c.want == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}
	// The scheme's name is case-insensitive (RFC 9110 §11.1), and one or
	// more spaces follow it; another scheme is no bearer token.
	list := fmt.Sprintf("/v4/%s/files", tenant)
	for _, h := range []string{"bearer " + good, "BEARER " + good, "bEaReR " + good, "Bearer   " + good} {
		if r := s.Do(t, http.MethodGet, list, "", nil, "Authorization", h); r.Status != http.StatusOK {
			t.Errorf("Authorization: %.10s…: %d %s", h, r.Status, r.Body)
		}
	}
	for _, h := range []string{"Basic " + good, "Bearer" + good, "Bearer", good} {
		if r := s.Do(t, http.MethodGet, list, "", nil, "Authorization", h); r.Status != http.StatusUnauthorized {
			t.Errorf("Authorization: %.10s…: %d, want 401", h, r.Status)
		}
	}
}

func TestHealthReadinessAndSmoke(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	if r := s.Do(t, http.MethodGet, "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("healthz %d %s", r.Status, r.Body)
	}
	r := s.Do(t, http.MethodGet, "/readyz", "", nil)
	if r.Status != 200 {
		t.Fatalf("readyz %d %s", r.Status, r.Body)
	}
	checks := r.Map(t)["checks"].(map[string]any)
	for _, dep := range []string{"postgresql", "temporal", "minio"} {
		if checks[dep] != "ok" {
			t.Fatalf("readyz check %s = %v", dep, checks[dep])
		}
	}

	tenant := stacktest.NewTenant()
	r = s.Do(t, http.MethodGet, "/ops/whoami", s.Token(t, tenant, auth.ScopeElm), nil)
	if who := r.Map(t); r.Status != 200 || who["tenantId"] != tenant || who["userId"] != "test-user" || who["requestId"] == "" {
		t.Fatalf("whoami %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodPost, "/ops/smoke", s.Token(t, tenant), nil)
	if r.Status != 200 {
		t.Fatalf("smoke %d %s", r.Status, r.Body)
	}
	var res struct {
		WorkflowID string `json:"workflowId"`
		RunID      int64  `json:"runId"`
	}
	r.JSON(t, &res)
	// The row is read as the tenant's: another tenant's row is not found.
	gotWorkflow, err := storagetest.SmokeRunWorkflow(context.Background(), s.DB, tenant, res.RunID)
	if err != nil {
		t.Fatalf("the worker's row: %v", err)
	}
	if gotWorkflow != res.WorkflowID || !strings.HasPrefix(res.WorkflowID, "smoke-"+tenant+"-") {
		t.Fatalf("row of workflow %s, response %+v", gotWorkflow, res)
	}
}

func TestReadinessNamesWhatIsDown(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	// Point the object store at a port where nothing listens.
	broken, err := minioAt("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	s.Objects.Client = broken
	r := s.Do(t, http.MethodGet, "/readyz", "", nil)
	if r.Status != 503 {
		t.Fatalf("readyz %d %s", r.Status, r.Body)
	}
	if p := problem(t, r); !strings.Contains(p.Detail, "minio") || strings.Contains(p.Detail, "postgresql") {
		t.Fatalf("detail %q should name minio only", p.Detail)
	}
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
}

func TestUnknownRouteAndOversizeBody(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	r := s.Do(t, http.MethodGet, "/no/such/route", "", nil)
	if r.Status != 404 {
		t.Fatalf("unknown route %d", r.Status)
	}
	problem(t, r)

	// The server answers from the Content-Length header, before the body.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /ops/smoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", s.Config.FileSizeLimit+2<<20)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 413 {
		t.Fatalf("oversize body %d %s", res.StatusCode, body)
	}
	problem(t, stacktest.Response{Status: res.StatusCode, Header: res.Header, Body: body})
}

func TestMetricsUseRouteTemplates(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant := stacktest.NewTenant()
	s.Do(t, http.MethodGet, "/v4/"+tenant+"/files/a.png", "", nil)
	// HEAD runs a GET operation and answers its headers only.
	if r := s.Do(t, http.MethodHead, "/v4/"+tenant+"/files/a.png", "", nil); r.Status != 401 || len(r.Body) != 0 {
		t.Fatalf("HEAD without a token: %d %q", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodHead, "/healthz", "", nil); r.Status != 200 || len(r.Body) != 0 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("HEAD /healthz: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	// Refusals made before the router reaches the operation count under
	// the operation's route with their own status, and those HTTP parsing
	// makes under "unmatched".
	raw := func(request string) int {
		t.Helper()
		conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, request); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if st := raw("POST /v2/alerts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 9999999\r\n\r\n"); st != 413 {
		t.Fatalf("declared oversize: %d", st)
	}
	if st := raw("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"); st != 431 {
		t.Fatalf("oversize header: %d", st)
	}
	s.Do(t, http.MethodGet, "/no/such/route", "", nil)
	r := s.Do(t, http.MethodGet, "/metrics", "", nil)
	body := string(r.Body)
	for _, want := range []string{
		`tocsin_http_requests_total{method="GET",route="/v4/:tenantId/files/:FileName",status="401"} 1`,
		`tocsin_http_requests_total{method="HEAD",route="/v4/:tenantId/files/:FileName",status="401"} 1`,
		`tocsin_http_requests_total{method="HEAD",route="/healthz",status="200"} 1`,
		`tocsin_http_requests_total{method="POST",route="/v2/alerts",status="413"} 1`,
		`route="unmatched",status="431"} 1`,
		`tocsin_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		"tocsin_http_request_duration_seconds_bucket",
		"tocsin_http_requests_in_flight",
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, tenant) {
		t.Error("a tenant id leaked into a metric label")
	}
}

// TestBodylessPostNamesTheBody: an operation that requires a body and gets
// none answers a 400 whose failure names the body, with or without a
// content type.
func TestBodylessPostNamesTheBody(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/v2/alerts"},
		{http.MethodPut, "/v2/alerts/defaults"},
		{http.MethodPost, "/v4/" + tenant + "/alerts/bulkSend"},
	} {
		for _, body := range []any{nil, []byte{}} {
			r := s.Do(t, c.method, c.path, tok, body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%s %s without a body: %d %s", c.method, c.path, r.Status, r.Body)
			}
			p := problem(t, r)
			if len(p.Errors) != 1 || p.Errors[0].PropertyName != "body" || p.Errors[0].Location != "body" || p.Errors[0].ErrorMessage == "" {
				t.Fatalf("%s %s without a body: %s", c.method, c.path, r.Body)
			}
		}
	}
}

// TestValidationFailuresComeInOneOrder: the failures of one request are
// listed in the same order every time, by location (indexes by number),
// although validation finds unexpected properties in map order.
func TestValidationFailuresComeInOneOrder(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	adHoc := make([]map[string]any, 11)
	for i := range adHoc {
		adHoc[i] = map[string]any{"email": fmt.Sprintf("p%d@example.com", i)}
	}
	adHoc[2]["email"], adHoc[10]["email"] = "not an address", "nor this"
	body := map[string]any{
		"settings": map[string]any{
			"message":    map[string]any{"subject": "S", "body": "B", "zeta": 1, "alpha": 2, "mu": 3, "kappa": 4},
			"recipients": map[string]any{"adHoc": adHoc},
			"omega":      true, "beta": true, "delta": true, "gamma": true,
		},
		"yankee": 1, "xray": 2, "bravo": 3,
	}
	var first []string
	for i := 0; i < 20; i++ {
		r := s.Do(t, http.MethodPost, "/v2/alerts", tok, body)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		var got []string
		for _, f := range problem(t, r).Errors {
			got = append(got, f.Location)
		}
		if i == 0 {
			first = got
			want := []string{"body.bravo", "body.settings.beta", "body.settings.delta", "body.settings.gamma",
				"body.settings.message.alpha", "body.settings.message.kappa", "body.settings.message.mu", "body.settings.message.zeta",
				"body.settings.omega", "body.settings.recipients.adHoc[2].email", "body.settings.recipients.adHoc[10].email",
				"body.xray", "body.yankee"}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("failures at\n%v\nwant\n%v", got, want)
			}
			continue
		}
		if strings.Join(got, " ") != strings.Join(first, " ") {
			t.Fatalf("request %d lists its failures as\n%v\nthe first as\n%v", i, got, first)
		}
	}
}
