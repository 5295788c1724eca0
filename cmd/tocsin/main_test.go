package main

import (
	"bytes"
	"context"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/api"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
)

// TestTokenPrintsOnlyAVerifiableToken checks `tocsin token`: stdout holds the
// token alone, and the server's default development configuration accepts it.
func TestTokenPrintsOnlyAVerifiableToken(t *testing.T) {
	t.Setenv("TOCSIN_ENV", "development")
	t.Setenv("TOCSIN_JWT_SECRET", "")
	var out, errOut bytes.Buffer
	if err := run([]string{"token", "--tenant", "1001", "--sub", "ops", "--scope", "content", "--scope", "elm"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	raw := strings.TrimSuffix(out.String(), "\n")
	if strings.ContainsAny(raw, " \n") || strings.Count(raw, ".") != 2 {
		t.Fatalf("stdout is not one token: %q", out.String())
	}
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: cfg.JWTSecret})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tenant != "1001" || p.Subject != "ops" || !p.HasScope("elm") || p.HasScope("tamarack") {
		t.Fatalf("%+v", p)
	}
	if err := run([]string{"token"}, &out, &errOut); err == nil {
		t.Fatal("token without --tenant succeeded")
	}
}

func TestProductionRefusesTheDevelopmentSecret(t *testing.T) {
	t.Setenv("TOCSIN_ENV", "production")
	t.Setenv("TOCSIN_JWT_SECRET", config.DevJWTSecret)
	if _, err := config.Load(); err == nil {
		t.Fatal("production accepted the development secret")
	}
	t.Setenv("TOCSIN_JWT_SECRET", "")
	if _, err := config.Load(); err == nil {
		t.Fatal("production started with no way to verify tokens")
	}
}

// TestSandboxServesWhatItReceives runs `tocsin sandbox` and posts a text to it.
func TestSandboxServesWhatItReceives(t *testing.T) {
	ports := freePorts(t, 3)
	cfg := config.Config{SMTPAddr: ports[0], SMSURL: "http://" + ports[1] + "/messages", SMSToken: "tok"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runSandbox(ctx, cfg, []string{"--inspect", ports[2]}, newLogger("error", io.Discard)) }()
	var body []byte
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodPost, cfg.SMSURL, strings.NewReader(`{"to":"+15551230000","body":"hello"}`))
		req.Header.Set("Authorization", "Bearer tok")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res, err := http.Get("http://" + ports[2] + "/messages"); err == nil {
				body, _ = io.ReadAll(res.Body)
				res.Body.Close()
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(string(body), `"body":"hello"`) {
		t.Fatalf("inspect answered %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ln.Addr().String())
		defer ln.Close()
	}
	return out
}

// TestCodecSignInShowsACommandThatMintsAnAcceptedToken: the codec endpoint's
// sign-in page tells operators how to mint their token; that command, run,
// prints a token the page signs in with. make run (deploy/local/run.sh) and
// the README give the same command. A tenant that is not a tenant id, which
// the page used to show (--tenant ops), is refused by the command, as the
// API refuses its token.
func TestCodecSignInShowsACommandThatMintsAnAcceptedToken(t *testing.T) {
	t.Setenv("TOCSIN_ENV", "development")
	t.Setenv("TOCSIN_JWT_SECRET", "")
	v, err := auth.NewVerifier(context.Background(), auth.VerifierConfig{Secret: config.DevJWTSecret})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{PublicURL: "http://127.0.0.1", PayloadKeys: payloadcrypt.DevKeys}
	codec, err := payloadcrypt.New(cfg.PayloadKeys, "")
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(rest.Deps{Config: cfg, Codec: codec, Logger: slog.New(slog.DiscardHandler)}, v, prometheus.NewRegistry())
	page := func(req *http.Request) (int, string) {
		t.Helper()
		res, err := srv.App.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	_, body := page(httptest.NewRequest(http.MethodGet, "/codec/session", nil))
	m := regexp.MustCompile(`<code>((?:bin/)?tocsin token [^<]*)</code>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the sign-in page shows no tocsin token command: %s", body)
	}
	command := html.UnescapeString(m[1])
	var out, errOut bytes.Buffer
	args := strings.Fields(command)[1:]
	if err := run(args, &out, &errOut); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	req := httptest.NewRequest(http.MethodPost, "/codec/session", strings.NewReader(url.Values{"token": {strings.TrimSpace(out.String())}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, body := page(req); status != http.StatusOK || !strings.Contains(body, "Signed in") {
		t.Fatalf("signing in with the token of %s: %d %s", command, status, body)
	}
	for _, file := range []string{"../../deploy/local/run.sh", "../../README.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), command) {
			t.Errorf("%s does not give the page's command %s", file, command)
		}
	}
	if err := run([]string{"token", "--tenant", "ops", "--scope", "operator"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "not a tenant id") {
		t.Errorf("a token for tenant ops: %v, want refused", err)
	}
}
