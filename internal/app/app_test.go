package app

import (
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
