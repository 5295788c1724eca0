package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

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
	TenantID int64  `path:"tenantId"`
	ID       string `path:"id" maxLength:"100"`
	Key      string `header:"Idempotency-Key" maxLength:"200"`
	rest.PageParams
	Body fuzzBody
}

// FuzzRequestDecoding sends arbitrary bodies, query strings, path ids,
// headers and content types through the real server (Fiber, body limits,
// auth, NUL and UTF-8 checks, huma decoding and validation, problem
// errors): no input may panic the process, produce a 5xx or an error body
// over 64 KiB, and a NUL or invalid UTF-8 string never reaches the handler.
func FuzzRequestDecoding(f *testing.F) {
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	s := api.New(rest.Deps{Config: config.Config{FileSizeLimit: 1 << 20, PublicURL: "http://x"}, Logger: slog.New(slog.DiscardHandler)}, v, prometheus.NewRegistry())
	rest.Register(s.API, rest.Op{ID: "fuzz", Method: http.MethodPost, Path: "/v4/{tenantId}/fuzz/{id}"},
		func(ctx context.Context, in *fuzzInput) (*struct{}, error) {
			for _, v := range append([]string{in.ID, in.Key, in.Body.Name, in.Body.When}, in.Body.Tags...) {
				if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
					return nil, fmt.Errorf("a bad string reached the handler: %q", v)
				}
			}
			for k, v := range in.Body.Extra {
				if strings.IndexByte(k+v, 0) >= 0 || !utf8.ValidString(k+v) {
					return nil, fmt.Errorf("a bad string reached the handler: %q", k+v)
				}
			}
			return nil, nil
		})
	token, err := auth.Mint("fuzz", auth.Principal{Subject: "f", Tenant: "7", Scopes: auth.AllScopes}, 3600e9)
	if err != nil {
		f.Fatal(err)
	}
	many := "{" + strings.Repeat(`"k":1,`, 3000) + `"name":"a"}`
	f.Add(`{"name":"a","priority":"Emergency","count":1}`, "page=1&pageSize=25&sort=name", "application/json", "a", "k")
	f.Add(`{"name":`, "page=-1", "application/json", "%00", "")
	f.Add(`[]`, "sort=-,,-", "text/json", "%ff%fe", "\xff")
	f.Add(`{"count":1e400,"when":"yesterday"}`, "pageSize=99999999999999999999", "application/json", "..", "")
	f.Add("\xff\xfe", "page=%zz", "application/x-www-form-urlencoded", "x", "")
	f.Add(`{"extra":{"a":1}}`, "", "multipart/form-data; boundary=", "x", "")
	f.Add(`{"name":"a\u0000","extra":{"k\u0000":"v"}}`, "sort=%00", "application/json", "x", "")
	f.Add("{\"name\":\"\xc3\x28\",\"tags\":[\"\xed\xa0\x80\"]}", "", "application/json", "x", "")
	f.Add(strings.Repeat("[", 20000)+strings.Repeat("]", 20000), "", "application/json", "x", "")
	f.Add(many, "", "application/json", "x", "")
	f.Add(`{"name":"a","NAME":"b","extra":{"K":"1","\u212a":"2"}}`, "sort=name&sort=-name&page=1&page=2", "application/json", "x", "")
	f.Add("--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nabc", "", "multipart/form-data; boundary=b", "x", "")
	f.Fuzz(func(t *testing.T, body, query, contentType, id, key string) {
		req, err := http.NewRequest(http.MethodPost, "http://x/v4/7/fuzz/x", strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		req.URL.RawPath = "/v4/7/fuzz/" + id
		if _, err := url.PathUnescape(id); err != nil || id == "" || strings.ContainsAny(id, "/?#") {
			t.Skip()
		}
		req.URL.Path = "/v4/7/fuzz/" + func() string { u, _ := url.PathUnescape(id); return u }()
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+token)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
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
			t.Fatalf("status %d for body %q query %q content type %q id %q key %q: %s", res.StatusCode, body, query, contentType, id, key, b)
		}
		if len(b) > 64<<10 {
			t.Fatalf("a %d-byte answer for body %q", len(b), body)
		}
	})
}
