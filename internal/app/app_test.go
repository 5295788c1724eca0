package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/secrets"
)

func TestNewSecretsBoxUsesTheDevelopmentKeyOnlyInDevelopment(t *testing.T) {
	t.Parallel()
	own := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	dev, _ := secrets.New(secrets.DevKey)
	sealedWithDev, err := dev.Seal([]byte("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, env, key string
		ok, opensDev   bool
	}{
		{"development without a key", "development", "", true, true},
		{"development with its own key", "development", own, true, false},
		{"production with its own key", "production", own, true, false},
		{"production without a key", "production", "", false, false},
		{"no mode and no key", "", "", false, false},
		{"a key that is not base64", "development", "not a key", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			box, err := NewSecretsBox(config.Config{Env: c.env, SecretsKey: c.key})
			if (err == nil) != c.ok {
				t.Fatalf("error %v, want ok=%v", err, c.ok)
			}
			if err != nil {
				return
			}
			_, err = box.Open(sealedWithDev, nil)
			if (err == nil) != c.opensDev {
				t.Fatalf("opening a value sealed with the development key: %v, want success=%v", err, c.opensDev)
			}
		})
	}
}

// TestNewBuildsTheOutboundPolicyOrFails: the outbound policy is built once,
// from TOCSIN_HOOK_ALLOW_HOSTS and TOCSIN_HOOK_ALLOW_HTTP, and a bad allow
// list is an error of the App's construction, never a policy that allows
// nothing extra in its place.
func TestNewBuildsTheOutboundPolicyOrFails(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	cfg := config.Config{Env: "development", HookAllowHosts: []string{"hooks.internal", "-bad-.com"}}
	if a, err := New(cfg, logger); err == nil || !strings.Contains(err.Error(), "TOCSIN_HOOK_ALLOW_HOSTS") || !strings.Contains(err.Error(), "-bad-.com") {
		t.Fatalf("New: %v; want an error naming the entry (App %p)", err, a)
	}
	cfg.HookAllowHosts, cfg.HookAllowHTTP = []string{"hooks.internal", "127.0.0.1"}, true
	a, err := New(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://hooks.internal/in", "http://127.0.0.1:8080/in"} {
		if _, err := a.Outbound.CheckURL(context.Background(), u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if _, err := a.Outbound.CheckURL(context.Background(), "http://10.0.0.1/in"); err == nil {
		t.Error("a private address not in the allow list was allowed")
	}
}
