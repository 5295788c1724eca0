package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/api"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
)

type fuzzBody struct {
	Name     string            `json:"name" minLength:"1" maxLength:"20"`
	Priority string            `json:"priority" enum:"Emergency,NonEmergency"`
	Count    int               `json:"count" minimum:"0"`
	When     string            `json:"when,omitempty" format:"date-time"`
	Tags     []string          `json:"tags,omitempty" maxItems:"3"`
	Extra    map[string]string `json:"extra,omitempty"`
}

type fuzzInput struct {
	TenantID int64 `path:"tenantId"`
	rest.PageParams
	Body fuzzBody
}

// FuzzRequestDecoding sends arbitrary bodies, query strings and content types
// through the real server (Fiber, auth, huma decoding and validation, problem
// errors): no input may panic the process or produce a 5xx.
func FuzzRequestDecoding(f *testing.F) {
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	s := api.New(rest.Deps{Config: config.Config{FileSizeLimit: 1 << 20, PublicURL: "http://x"}, Logger: slog.New(slog.DiscardHandler)}, v, prometheus.NewRegistry())
	rest.Register(s.API, rest.Op{ID: "fuzz", Method: http.MethodPost, Path: "/v4/{tenantId}/fuzz"},
		func(ctx context.Context, in *fuzzInput) (*struct{}, error) { return nil, nil })
	token, err := auth.Mint("fuzz", auth.Principal{Subject: "f", Tenant: "7", Scopes: auth.AllScopes}, 3600e9)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(`{"name":"a","priority":"Emergency","count":1}`, "page=1&pageSize=25&sort=name", "application/json")
	f.Add(`{"name":`, "page=-1", "application/json")
	f.Add(`[]`, "sort=-,,-", "text/json")
	f.Add(`{"count":1e400,"when":"yesterday"}`, "pageSize=99999999999999999999", "application/json")
	f.Add("\xff\xfe", "page=%zz", "application/x-www-form-urlencoded")
	f.Add(`{"extra":{"a":1}}`, "", "multipart/form-data; boundary=")
	f.Fuzz(func(t *testing.T, body, query, contentType string) {
		req, err := http.NewRequest(http.MethodPost, "http://x/v4/7/fuzz", strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := s.App.Test(req, 5000)
		if err != nil {
			if strings.Contains(err.Error(), "timeout") {
				t.Fatalf("no answer within 5s for body %q query %q content type %q", body, query, contentType)
			}
			// The client side could not write this request; nothing reached the server.
			t.Skip()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode >= 500 {
			t.Fatalf("status %d for body %q query %q content type %q: %s", res.StatusCode, body, query, contentType, b)
		}
	})
}
