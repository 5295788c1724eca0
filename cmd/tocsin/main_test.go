package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/config"
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
