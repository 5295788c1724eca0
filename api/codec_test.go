package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tocsin/tocsin/api"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
)

// codecServer serves the API on a loopback port with the development
// payload keys; it needs no other service.
func codecServer(t *testing.T) (base string, codec *payloadcrypt.Codec) {
	t.Helper()
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: config.DevJWTSecret})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{
		FileSizeLimit: 1 << 20, PublicURL: "http://127.0.0.1", PayloadKeys: payloadcrypt.DevKeys,
		CodecAllowOrigins: []string{"http://127.0.0.1:8233"},
	}
	// The server's codec is its own, as the Temporal client's is in a
	// deployment: what the test encodes must decode there.
	served, err := payloadcrypt.New(cfg.PayloadKeys, "")
	if err != nil {
		t.Fatal(err)
	}
	s := api.New(rest.Deps{Config: cfg, Codec: served, Logger: slog.New(slog.DiscardHandler)}, v, prometheus.NewRegistry())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.App.Listener(ln) }()
	t.Cleanup(func() { _ = s.App.ShutdownWithTimeout(5 * time.Second) })
	codec, err = payloadcrypt.New(cfg.PayloadKeys, "")
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + ln.Addr().String(), codec
}

func codecToken(t *testing.T, scopes ...string) string {
	t.Helper()
	tok, err := auth.Mint(config.DevJWTSecret, auth.Principal{Subject: "op", Tenant: "1", Scopes: scopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type codecReply struct {
	status int
	header http.Header
	body   []byte
}

func codecPost(t *testing.T, url string, body []byte, headers ...string) codecReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Namespace", "default")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return codecReply{res.StatusCode, res.Header, b}
}

// TestCodecEndpointDecodesForOperatorsOnly: the Temporal UI's codec protocol
// (/codec/decode and /codec/encode, payloads as JSON) answers an operator
// token and refuses anyone else.
func TestCodecEndpointDecodesForOperatorsOnly(t *testing.T) {
	base, codec := codecServer(t)
	sealed, err := codec.DataConverter().ToPayloads(map[string]string{"to": "ada@example.com", "body": "Leave by the north stairs."})
	if err != nil {
		t.Fatal(err)
	}
	body, err := protojson.Marshal(sealed)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(body, []byte("ada@example.com")) {
		t.Fatal("the sealed payloads are in clear")
	}

	// No token: 401 as a problem.
	r := codecPost(t, base+"/codec/decode", body)
	if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") ||
		r.header.Get("WWW-Authenticate") == "" || bytes.Contains(r.body, []byte("ada@")) {
		t.Fatalf("no token: %d %s %s", r.status, r.header, r.body)
	}
	// A forged token: 401.
	forged, _ := auth.Mint("another secret", auth.Principal{Subject: "op", Tenant: "1", Scopes: []string{auth.ScopeOperator}}, time.Hour)
	if r := codecPost(t, base+"/codec/decode", body, "Authorization", "Bearer "+forged); r.status != http.StatusUnauthorized {
		t.Fatalf("forged token: %d %s", r.status, r.body)
	}
	// A tenant's token with every tenant scope: 403, payloads span tenants.
	if r := codecPost(t, base+"/codec/decode", body, "Authorization", "Bearer "+codecToken(t, auth.AllScopes...)); r.status != http.StatusForbidden ||
		!strings.Contains(string(r.body), "operator") {
		t.Fatalf("tenant token: %d %s", r.status, r.body)
	}

	// An operator's token decodes.
	op := codecToken(t, auth.ScopeOperator)
	r = codecPost(t, base+"/codec/decode", body, "Authorization", "Bearer "+op)
	if r.status != http.StatusOK {
		t.Fatalf("operator decode: %d %s", r.status, r.body)
	}
	// The scheme's name is case-insensitive (RFC 9110 §11.1).
	if r := codecPost(t, base+"/codec/decode", body, "Authorization", "bearer "+op); r.status != http.StatusOK {
		t.Fatalf("operator decode, bearer in lower case: %d %s", r.status, r.body)
	}
	plain := decodedPayloads(t, r.body)
	if len(plain.Payloads) != 1 || string(plain.Payloads[0].Metadata["encoding"]) != "json/plain" ||
		!strings.Contains(string(plain.Payloads[0].Data), "ada@example.com") {
		t.Fatalf("decoded %s", r.body)
	}

	// Encode gives back ciphertext that the worker's codec opens.
	plainBody, _ := protojson.Marshal(plain)
	r = codecPost(t, base+"/codec/encode", plainBody, "Authorization", "Bearer "+op)
	if r.status != http.StatusOK || bytes.Contains(r.body, []byte("ada@")) {
		t.Fatalf("operator encode: %d %s", r.status, r.body)
	}
	again, err := codec.Decode(decodedPayloads(t, r.body).Payloads)
	if err != nil || !strings.Contains(string(again[0].Data), "ada@example.com") {
		t.Fatalf("re-encoded payload: %v", err)
	}
	if r := codecPost(t, base+"/codec/encode", plainBody); r.status != http.StatusUnauthorized {
		t.Fatalf("encode without token: %d", r.status)
	}
}

// TestCodecEndpointRefusesInAProblem: payloads the codec cannot open, or
// that are not JSON, are a 400 problem naming body.payloads, bounded
// whatever they quote, like every other refusal.
func TestCodecEndpointRefusesInAProblem(t *testing.T) {
	base, _ := codecServer(t)
	op := codecToken(t, auth.ScopeOperator)
	keyID := strings.Repeat("k", 300_000)
	unknownKey, _ := json.Marshal(map[string]any{"payloads": []map[string]any{{
		"metadata": map[string][]byte{"encoding": []byte("binary/encrypted"), "encryption-key-id": []byte(keyID)}, "data": []byte("sealed"),
	}}})
	notJSON := []byte(`{"payloads": [` + keyID)
	for _, c := range []struct {
		name, path string
		body       []byte
	}{{"unknown key", "/codec/decode", unknownKey}, {"not JSON", "/codec/decode", notJSON}, {"not JSON", "/codec/encode", notJSON}} {
		r := codecPost(t, base+c.path, c.body, "Authorization", "Bearer "+op)
		if r.status != http.StatusBadRequest || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") || len(r.body) > 64<<10 {
			t.Fatalf("%s %s: %d %s, %d bytes", c.name, c.path, r.status, r.header.Get("Content-Type"), len(r.body))
		}
		var p rest.ProblemDetails
		if err := json.Unmarshal(r.body, &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Location != "body.payloads" {
			t.Fatalf("%s %s: %s %v", c.name, c.path, r.body[:min(len(r.body), 500)], err)
		}
	}
}

// TestCodecEndpointBrowserSignIn: the UI calls from its own origin, with
// the cookie an operator got by signing in on /codec/session.
func TestCodecEndpointBrowserSignIn(t *testing.T) {
	base, codec := codecServer(t)
	sealed, _ := codec.DataConverter().ToPayloads("+12025550123")
	body, _ := protojson.Marshal(sealed)

	// CORS preflight: the UI's origin is allowed with credentials, another is not.
	preflight := func(origin string) http.Header {
		req, _ := http.NewRequest(http.MethodOptions, base+"/codec/decode", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-namespace")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.Header
	}
	if h := preflight("http://127.0.0.1:8233"); h.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8233" ||
		h.Get("Access-Control-Allow-Credentials") != "true" || !strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "x-namespace") {
		t.Fatalf("preflight from the UI: %v", h)
	}
	if h := preflight("http://evil.example"); h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from another origin: %v", h)
	}

	signIn := func(token string) *http.Response {
		res, err := http.PostForm(base+"/codec/session", url.Values{"token": {token}})
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res
	}
	// A tenant token does not sign in.
	if res := signIn(codecToken(t, auth.AllScopes...)); res.StatusCode != http.StatusForbidden || len(res.Cookies()) != 0 {
		t.Fatalf("tenant sign-in: %d %v", res.StatusCode, res.Cookies())
	}
	res := signIn(codecToken(t, auth.ScopeOperator))
	if res.StatusCode != http.StatusOK || len(res.Cookies()) != 1 {
		t.Fatalf("operator sign-in: %d %v", res.StatusCode, res.Cookies())
	}
	ck := res.Cookies()[0]
	if !ck.HttpOnly || ck.Path != "/codec" || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", ck)
	}
	r := codecPost(t, base+"/codec/decode", body, "Origin", "http://127.0.0.1:8233", "Cookie", ck.Name+"="+ck.Value)
	if r.status != http.StatusOK || !strings.Contains(string(decodedPayloads(t, r.body).Payloads[0].Data), "+12025550123") ||
		r.header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8233" {
		t.Fatalf("decode with the cookie: %d %v %s", r.status, r.header, r.body)
	}
	// The UI without OIDC sends "Bearer undefined" when told to pass a token: the cookie still counts.
	if r := codecPost(t, base+"/codec/decode", body, "Authorization", "Bearer undefined", "Cookie", ck.Name+"="+ck.Value); r.status != http.StatusOK {
		t.Fatalf("cookie beside a useless bearer: %d %s", r.status, r.body)
	}
}

func decodedPayloads(t *testing.T, body []byte) *commonpb.Payloads {
	t.Helper()
	// The SDK's handler writes the payloads with encoding/json (bytes as base64).
	var ps commonpb.Payloads
	if err := json.Unmarshal(body, &ps); err != nil {
		t.Fatalf("payloads %s: %v", body, err)
	}
	return &ps
}
