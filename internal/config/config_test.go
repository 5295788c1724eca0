package config_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
)

// TestREADMEListsEverySetting keeps the README's settings table true to the code.
func TestREADMEListsEverySetting(t *testing.T) {
	src, err := os.ReadFile("config.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	vars := regexp.MustCompile(`env:"([A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(vars) < 10 {
		t.Fatalf("found only %d settings", len(vars))
	}
	for _, v := range vars {
		if !strings.Contains(string(readme), "| `"+v[1]+"` |") {
			t.Errorf("README's settings table lacks %s", v[1])
		}
	}
	for _, m := range regexp.MustCompile("\\| `(TOCSIN_[A-Z_]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		if !strings.Contains(string(src), `env:"`+m[1]+`"`) {
			t.Errorf("README documents %s, which the code does not read", m[1])
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Setenv("TOCSIN_DATABASE_URL", "")
	t.Setenv("DATABASE_URL", "postgres://db.example/x")
	c, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://db.example/x" || c.HTTPAddr != "127.0.0.1:8080" || c.JWTSecret != config.DevJWTSecret ||
		c.HTTPMaxConns != 10000 || c.HTTPHeaderTimeout != 10*time.Second {
		t.Fatalf("%+v", c)
	}
	t.Setenv("TOCSIN_ENV", "staging")
	if _, err := config.Load(); err == nil {
		t.Fatal("accepted an unknown TOCSIN_ENV")
	}
}

func TestSecretsKey(t *testing.T) {
	t.Setenv("TOCSIN_ENV", "development")
	t.Setenv("TOCSIN_SECRETS_KEY", "")
	c, err := config.Load()
	if err != nil || c.SecretsKey == "" {
		t.Fatalf("development without a key: %v %q", err, c.SecretsKey)
	}
	t.Setenv("TOCSIN_SECRETS_KEY", "too-short")
	if _, err := config.Load(); err == nil {
		t.Fatal("accepted a key that is not 32 base64 bytes")
	}
	t.Setenv("TOCSIN_ENV", "production")
	t.Setenv("TOCSIN_JWT_SECRET", "a-production-secret")
	t.Setenv("TOCSIN_SECRETS_KEY", "")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_SECRETS_KEY") {
		t.Fatalf("production without a key: %v", err)
	}
	t.Setenv("TOCSIN_SECRETS_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	t.Setenv("TOCSIN_PAYLOAD_KEYS", "k1:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=")
	if _, err := config.Load(); err != nil {
		t.Fatalf("production with a key: %v", err)
	}
}

func TestPayloadKeys(t *testing.T) {
	t.Setenv("TOCSIN_ENV", "development")
	t.Setenv("TOCSIN_PAYLOAD_KEYS", "")
	t.Setenv("TOCSIN_PAYLOAD_KEY_ID", "")
	c, err := config.Load()
	if err != nil || c.PayloadKeys != payloadcrypt.DevKeys {
		t.Fatalf("development without payload keys: %v %q", err, c.PayloadKeys)
	}
	const k1, k2 = "k1:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=", "k2:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	t.Setenv("TOCSIN_PAYLOAD_KEYS", k2+","+k1)
	t.Setenv("TOCSIN_PAYLOAD_KEY_ID", "k3")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_PAYLOAD_KEY_ID") {
		t.Fatalf("a current key outside the ring: %v", err)
	}
	t.Setenv("TOCSIN_PAYLOAD_KEY_ID", "k1")
	if _, err := config.Load(); err != nil {
		t.Fatalf("a ring of two: %v", err)
	}
	t.Setenv("TOCSIN_PAYLOAD_KEYS", "k1:short")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_PAYLOAD_KEYS") {
		t.Fatalf("a bad key: %v", err)
	}

	t.Setenv("TOCSIN_ENV", "production")
	t.Setenv("TOCSIN_JWT_SECRET", "a-production-secret")
	t.Setenv("TOCSIN_SECRETS_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	t.Setenv("TOCSIN_PAYLOAD_KEY_ID", "")
	for _, keys := range []string{"", payloadcrypt.DevKeys, k1 + ",old:" + payloadcrypt.DevKey} {
		t.Setenv("TOCSIN_PAYLOAD_KEYS", keys)
		if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_PAYLOAD_KEYS") {
			t.Fatalf("production with payload keys %q: %v", keys, err)
		}
	}

	t.Setenv("TOCSIN_ENV", "development")
	t.Setenv("TOCSIN_PAYLOAD_KEYS", "")
	t.Setenv("TOCSIN_CODEC_ALLOW_ORIGINS", "*")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_CODEC_ALLOW_ORIGINS") {
		t.Fatalf("a wildcard origin: %v", err)
	}
}

func TestSlotsPoolsAndHTTPLimitsMustBePositive(t *testing.T) {
	for _, k := range []string{"TOCSIN_WORKER_MAX_ACTIVITIES", "TOCSIN_WORKER_URGENT_ACTIVITIES", "TOCSIN_WORKER_URGENT_DB_CONNS",
		"TOCSIN_HTTP_MAX_CONNS", "TOCSIN_HTTP_HEADER_TIMEOUT", "TOCSIN_PROVIDER_TIMEOUT"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, "0")
			if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), k) {
				t.Fatalf("%s=0 accepted: %v", k, err)
			}
		})
	}
}

// A provider's answer must come well inside a delivery batch's 5 minutes.
func TestProviderTimeoutFitsABatch(t *testing.T) {
	t.Setenv("TOCSIN_PROVIDER_TIMEOUT", "3m")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_PROVIDER_TIMEOUT") {
		t.Fatalf("3m accepted: %v", err)
	}
	t.Setenv("TOCSIN_PROVIDER_TIMEOUT", "2m")
	if c, err := config.Load(); err != nil || c.ProviderTimeout != 2*time.Minute {
		t.Fatalf("2m: %v %v", c.ProviderTimeout, err)
	}
}

// An upload's maximum life must outlast the longest upload, or the orphan
// sweep would take the objects of uploads still in progress.
func TestUploadMaxLifeOutlastsAnUpload(t *testing.T) {
	c, err := config.Load()
	if err != nil || c.FileUploadMaxLife != 15*time.Minute {
		t.Fatalf("default %s, %v", c.FileUploadMaxLife, err)
	}
	t.Setenv("TOCSIN_FILE_PROCESS_TIMEOUT", "14m")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_FILE_UPLOAD_MAX_LIFE") {
		t.Fatalf("a maximum life shorter than the processing accepted: %v", err)
	}
	t.Setenv("TOCSIN_FILE_UPLOAD_MAX_LIFE", "16m")
	if _, err := config.Load(); err != nil {
		t.Fatal(err)
	}
}

// TestHookAllowHostsFollowTheHostRule: an entry of TOCSIN_HOOK_ALLOW_HOSTS
// that is not an address, a CIDR or a host name by the rule of hook
// targets' hosts stops the configuration, naming the variable and the
// entry.
func TestHookAllowHostsFollowTheHostRule(t *testing.T) {
	for _, bad := range []string{"exa mple.com", "-bad-.com", "ｅxample.com", "exаmple.com", "10.0.0.0/33"} {
		t.Setenv("TOCSIN_HOOK_ALLOW_HOSTS", "hooks.internal,"+bad)
		if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TOCSIN_HOOK_ALLOW_HOSTS") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v, want refused naming TOCSIN_HOOK_ALLOW_HOSTS and the entry", bad, err)
		}
	}
	t.Setenv("TOCSIN_HOOK_ALLOW_HOSTS", "10.0.0.0/8,127.0.0.1,::1,bücher.internal,sms_gateway")
	if _, err := config.Load(); err != nil {
		t.Fatal(err)
	}
}
