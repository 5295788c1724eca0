package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
