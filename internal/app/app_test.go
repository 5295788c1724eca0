package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
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

// TestNewFailsOnSettingsItCannotUse: the outbound policy and the payload
// codec are built once, by New, and a setting they cannot use is an error
// of the App's construction, never a policy that allows nothing extra or a
// codec endpoint that answers 503 in their place.
func TestNewFailsOnSettingsItCannotUse(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		name string
		cfg  config.Config
		says string
	}{
		{"allow list", config.Config{Env: "development", PayloadKeys: payloadcrypt.DevKeys, HookAllowHosts: []string{"hooks.internal", "-bad-.com"}}, "-bad-.com"},
		{"payload keys", config.Config{Env: "development", PayloadKeys: "k1:short"}, "k1"},
	} {
		if a, err := New(c.cfg, logger); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: New: %v; want an error naming %q (App %p)", c.name, err, c.says, a)
		}
	}
}

// TestNewBuildsTheOutboundPolicy: the App's policy is the configured one.
func TestNewBuildsTheOutboundPolicy(t *testing.T) {
	t.Parallel()
	cfg := config.Config{Env: "development", PayloadKeys: payloadcrypt.DevKeys, HookAllowHosts: []string{"hooks.internal", "127.0.0.1"}, HookAllowHTTP: true}
	a, err := New(cfg, slog.New(slog.DiscardHandler))
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
