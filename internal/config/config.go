// Package config reads tocsin's settings from TOCSIN_* environment variables.
package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
	"github.com/tocsin/tocsin/internal/secrets"
)

// Config holds every setting of the API server and the worker. Each field is
// read from the environment variable named in its env tag; the README lists
// them all with their defaults.
type Config struct {
	// Env is "development" or "production". Production refuses the built-in
	// development JWT secret.
	Env      string `env:"TOCSIN_ENV" envDefault:"development"`
	LogLevel string `env:"TOCSIN_LOG_LEVEL" envDefault:"info"`

	HTTPAddr      string `env:"TOCSIN_HTTP_ADDR" envDefault:"127.0.0.1:8080"`
	PublicURL     string `env:"TOCSIN_PUBLIC_URL" envDefault:"http://127.0.0.1:8080"`
	BodyLimit     int    `env:"TOCSIN_BODY_LIMIT_BYTES" envDefault:"1048576"`
	FileSizeLimit int64  `env:"TOCSIN_FILE_SIZE_LIMIT_BYTES" envDefault:"26214400"`
	// FileProcessTimeout is how long an upload waits for its file to be
	// checked and encoded; then the processing is cancelled and nothing of
	// the upload is kept.
	FileProcessTimeout time.Duration `env:"TOCSIN_FILE_PROCESS_TIMEOUT" envDefault:"55s"`
	// FileUploadMaxLife is how long an upload may take from its first
	// object stored to its file recorded. The objects of an upload that
	// has not recorded its file nor removed them by then (its process
	// died) are orphans, which the worker's sweep removes.
	FileUploadMaxLife time.Duration `env:"TOCSIN_FILE_UPLOAD_MAX_LIFE" envDefault:"15m"`
	// ImportSizeLimit bounds the body of a contacts import
	// (createFromFile), which is streamed and may be far larger than a file.
	ImportSizeLimit int64 `env:"TOCSIN_IMPORT_SIZE_LIMIT_BYTES" envDefault:"1073741824"`
	// TestingEndpoints turns on the /{tenantId}/testing/* operations that
	// reveal pending verification codes. Never enable it in production.
	TestingEndpoints bool `env:"TOCSIN_TESTING_ENDPOINTS" envDefault:"false"`
	// HTTPMaxConns bounds the connections the API holds open at once;
	// past it a new connection is answered 503 and closed.
	HTTPMaxConns int `env:"TOCSIN_HTTP_MAX_CONNS" envDefault:"10000"`
	// HTTPHeaderTimeout is how long a client has to send a request's head,
	// from opening the connection or from the first byte of a later request
	// on it; the body then has a minute of its own.
	HTTPHeaderTimeout time.Duration `env:"TOCSIN_HTTP_HEADER_TIMEOUT" envDefault:"10s"`
	// HTTPRequestTimeout bounds the work of a request once its body is
	// read: a request that waits longer (for a database connection, a lock,
	// Temporal) is answered 503. Streamed and multipart uploads have
	// bounds of their own (FileProcessTimeout, the body's minute).
	HTTPRequestTimeout time.Duration `env:"TOCSIN_HTTP_REQUEST_TIMEOUT" envDefault:"30s"`

	DatabaseURL string `env:"TOCSIN_DATABASE_URL"`
	// DatabaseURLFallback is the conventional DATABASE_URL, used when
	// TOCSIN_DATABASE_URL is empty.
	DatabaseURLFallback string `env:"DATABASE_URL"`
	DBMaxOpenConns      int    `env:"TOCSIN_DB_MAX_OPEN_CONNS" envDefault:"20"`

	TemporalAddress   string `env:"TOCSIN_TEMPORAL_ADDRESS" envDefault:"127.0.0.1:7233"`
	TemporalNamespace string `env:"TOCSIN_TEMPORAL_NAMESPACE" envDefault:"default"`
	TemporalTaskQueue string `env:"TOCSIN_TEMPORAL_TASK_QUEUE" envDefault:"tocsin"`

	MinIOEndpoint  string `env:"TOCSIN_MINIO_ENDPOINT" envDefault:"127.0.0.1:9000"`
	MinIOAccessKey string `env:"TOCSIN_MINIO_ACCESS_KEY" envDefault:"minioadmin"`
	MinIOSecretKey string `env:"TOCSIN_MINIO_SECRET_KEY" envDefault:"minioadmin"`
	MinIOBucket    string `env:"TOCSIN_MINIO_BUCKET" envDefault:"tocsin"`
	MinIOSecure    bool   `env:"TOCSIN_MINIO_SECURE" envDefault:"false"`

	// JWTSecret is the HS256 shared secret. Empty in production means HS256
	// tokens are refused and only JWKS keys are trusted.
	JWTSecret   string `env:"TOCSIN_JWT_SECRET"`
	JWKSURL     string `env:"TOCSIN_JWKS_URL"`
	JWTIssuer   string `env:"TOCSIN_JWT_ISSUER"`
	JWTAudience string `env:"TOCSIN_JWT_AUDIENCE"`

	WorkerMetricsAddr   string `env:"TOCSIN_WORKER_METRICS_ADDR" envDefault:"127.0.0.1:9464"`
	WorkerMaxActivities int    `env:"TOCSIN_WORKER_MAX_ACTIVITIES" envDefault:"64"`
	// WorkerUrgentActivities are the activity slots the urgent lane
	// (Emergency alerts, verification codes) keeps for itself.
	WorkerUrgentActivities int `env:"TOCSIN_WORKER_URGENT_ACTIVITIES" envDefault:"16"`
	// WorkerUrgentDBConns is the urgent lane's own database pool.
	WorkerUrgentDBConns int `env:"TOCSIN_WORKER_URGENT_DB_CONNS" envDefault:"8"`
	// ImageDecodeConcurrency bounds the uploaded images a worker process
	// decodes at once (each may take up to media.MaxDecodedBytes).
	ImageDecodeConcurrency int `env:"TOCSIN_IMAGE_DECODE_CONCURRENCY" envDefault:"2"`
	DeliveryBatchSize      int `env:"TOCSIN_DELIVERY_BATCH_SIZE" envDefault:"1000"`
	DeliveryParallelism    int `env:"TOCSIN_DELIVERY_PARALLELISM" envDefault:"8"`
	ProviderConcurrency    int `env:"TOCSIN_PROVIDER_CONCURRENCY" envDefault:"64"`
	// DeliveryRates caps messages per second per tenant and channel
	// ("text=50,email=200"); channels not listed are not limited.
	DeliveryRates map[string]float64 `env:"TOCSIN_DELIVERY_RATES" envKeyValSeparator:"="`
	// DeliveryMaxAttempts bounds the attempts of a delivery batch with
	// temporary provider failures; what still fails after them is Failed.
	DeliveryMaxAttempts int `env:"TOCSIN_DELIVERY_MAX_ATTEMPTS" envDefault:"5"`
	// ReceiptsToken is the bearer token providers send with delivery
	// receipts; receipts are refused while it is empty.
	ReceiptsToken string `env:"TOCSIN_RECEIPTS_TOKEN"`
	// SecretsKey (base64, 32 bytes) seals provider credentials and hook
	// signing secrets at rest.
	// Development uses secrets.DevKey when it is unset; production requires one.
	SecretsKey          string        `env:"TOCSIN_SECRETS_KEY"`
	VerificationCodeTTL time.Duration `env:"TOCSIN_VERIFICATION_CODE_TTL" envDefault:"10m"`
	// PayloadKeys is the key ring that encrypts every Temporal payload
	// ("id:base64key,..."; each key 32 bytes). Development uses
	// payloadcrypt.DevKeys when it is unset; production requires keys of its own.
	PayloadKeys string `env:"TOCSIN_PAYLOAD_KEYS"`
	// PayloadKeyID names the key of the ring that encrypts; empty means the
	// first listed. The others only decrypt.
	PayloadKeyID string `env:"TOCSIN_PAYLOAD_KEY_ID"`
	// CodecAllowOrigins are the browser origins (the Temporal UI's) allowed to
	// call the payload codec endpoint /codec.
	CodecAllowOrigins []string `env:"TOCSIN_CODEC_ALLOW_ORIGINS" envSeparator:"," envDefault:"http://127.0.0.1:8233,http://localhost:8233"`

	SMTPAddr     string `env:"TOCSIN_SMTP_ADDR" envDefault:"127.0.0.1:1025"`
	SMTPUsername string `env:"TOCSIN_SMTP_USERNAME"`
	SMTPPassword string `env:"TOCSIN_SMTP_PASSWORD"`
	SMTPFrom     string `env:"TOCSIN_SMTP_FROM" envDefault:"tocsin <alerts@tocsin.localhost>"`
	SMTPTLS      string `env:"TOCSIN_SMTP_TLS" envDefault:"none"`
	// SMTPConnections is how many SMTP connections one email batch sends
	// over at once.
	SMTPConnections int `env:"TOCSIN_SMTP_CONNECTIONS" envDefault:"4"`
	// SMSURL is the endpoint of the HTTP text-message provider.
	SMSURL   string `env:"TOCSIN_SMS_URL" envDefault:"http://127.0.0.1:8091/messages"`
	SMSToken string `env:"TOCSIN_SMS_TOKEN"`

	// HookAllowHosts lists host names, addresses or CIDRs that hook targets
	// and channel provider URLs may use even though they are loopback or
	// private; a name follows the rule of their hosts (hooks.CheckHost).
	// HookAllowHTTP permits plain http.
	HookAllowHosts []string      `env:"TOCSIN_HOOK_ALLOW_HOSTS" envSeparator:","`
	HookAllowHTTP  bool          `env:"TOCSIN_HOOK_ALLOW_HTTP" envDefault:"false"`
	HookTimeout    time.Duration `env:"TOCSIN_HOOK_TIMEOUT" envDefault:"15s"`
	// ProviderTimeout is how long a tenant's channel provider (voice, ETN,
	// push, fax, team chat, social, neighborhood) has to answer a request;
	// CAP endpoints have cap.Timeout.
	ProviderTimeout time.Duration `env:"TOCSIN_PROVIDER_TIMEOUT" envDefault:"15s"`
	// HookRetrySchedule is the wait before each retry of a failed hook
	// delivery (before jitter); its length is the number of retries.
	HookRetrySchedule []time.Duration `env:"TOCSIN_HOOK_RETRY_SCHEDULE" envSeparator:"," envDefault:"5s,5m,30m,2h,5h,10h,10h"`
	// HookDispatchInterval is how often the worker looks for undispatched events.
	HookDispatchInterval time.Duration `env:"TOCSIN_HOOK_DISPATCH_INTERVAL" envDefault:"1s"`

	// StartPollInterval is how often the worker looks for workflow starts
	// nothing woke it for (the safety net of the start outbox).
	StartPollInterval time.Duration `env:"TOCSIN_START_POLL_INTERVAL" envDefault:"5s"`
	// BacklogTenantLimit and BacklogLimit are how many NonEmergency alerts
	// accepted and not final yet one tenant, and all tenants together, may
	// have before new NonEmergency alerts are refused (429 and 503); 0
	// means no limit. BacklogRetryAfter is the Retry-After of the refusal.
	BacklogTenantLimit int           `env:"TOCSIN_BACKLOG_TENANT_LIMIT" envDefault:"5000"`
	BacklogLimit       int           `env:"TOCSIN_BACKLOG_LIMIT" envDefault:"20000"`
	BacklogRetryAfter  time.Duration `env:"TOCSIN_BACKLOG_RETRY_AFTER" envDefault:"5s"`
}

// DevJWTSecret is the HS256 secret the server and `tocsin token` share in
// development when TOCSIN_JWT_SECRET is not set.
const DevJWTSecret = "tocsin-development-secret-do-not-use-in-production"

// DefaultDatabaseURL is used when neither TOCSIN_DATABASE_URL nor DATABASE_URL is set.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/tocsin?sslmode=disable"

// Load reads the configuration from the environment and checks it.
func Load() (Config, error) {
	var c Config
	if err := env.Parse(&c); err != nil {
		return c, fmt.Errorf("read environment: %w", err)
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = c.DatabaseURLFallback
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = DefaultDatabaseURL
	}
	switch c.Env {
	case "development":
		if c.JWTSecret == "" {
			c.JWTSecret = DevJWTSecret
		}
		if c.SecretsKey == "" {
			c.SecretsKey = secrets.DevKey
		}
		if c.PayloadKeys == "" {
			c.PayloadKeys = payloadcrypt.DevKeys
		}
	case "production":
		if c.SecretsKey == "" || c.SecretsKey == secrets.DevKey {
			return c, fmt.Errorf("production needs TOCSIN_SECRETS_KEY of its own (e.g. `openssl rand -base64 32`)")
		}
		if c.PayloadKeys == "" || strings.Contains(c.PayloadKeys, payloadcrypt.DevKey) {
			return c, fmt.Errorf("production needs TOCSIN_PAYLOAD_KEYS of its own (e.g. \"k1:$(openssl rand -base64 32)\")")
		}
		if c.JWTSecret == DevJWTSecret {
			return c, fmt.Errorf("TOCSIN_JWT_SECRET must not be the development secret in production")
		}
		if c.JWTSecret == "" && c.JWKSURL == "" {
			return c, fmt.Errorf("production needs TOCSIN_JWKS_URL or TOCSIN_JWT_SECRET")
		}
	default:
		return c, fmt.Errorf("TOCSIN_ENV must be development or production, not %q", c.Env)
	}
	if _, err := secrets.New(c.SecretsKey); err != nil {
		return c, err
	}
	if _, err := payloadcrypt.New(c.PayloadKeys, c.PayloadKeyID); err != nil {
		return c, err
	}
	for name, n := range map[string]int{"TOCSIN_WORKER_MAX_ACTIVITIES": c.WorkerMaxActivities,
		"TOCSIN_WORKER_URGENT_ACTIVITIES": c.WorkerUrgentActivities, "TOCSIN_WORKER_URGENT_DB_CONNS": c.WorkerUrgentDBConns,
		"TOCSIN_HTTP_MAX_CONNS": c.HTTPMaxConns, "TOCSIN_IMAGE_DECODE_CONCURRENCY": c.ImageDecodeConcurrency} {
		if n < 1 {
			return c, fmt.Errorf("%s must be at least 1, not %d", name, n)
		}
	}
	for name, d := range map[string]time.Duration{"TOCSIN_HTTP_HEADER_TIMEOUT": c.HTTPHeaderTimeout, "TOCSIN_FILE_PROCESS_TIMEOUT": c.FileProcessTimeout,
		"TOCSIN_PROVIDER_TIMEOUT": c.ProviderTimeout, "TOCSIN_HTTP_REQUEST_TIMEOUT": c.HTTPRequestTimeout} {
		if d <= 0 {
			return c, fmt.Errorf("%s must be positive, not %s", name, d)
		}
	}
	// A batch's requests must end well inside its activity's 5 minutes.
	if c.ProviderTimeout > 2*time.Minute {
		return c, fmt.Errorf("TOCSIN_PROVIDER_TIMEOUT must be at most 2m (a delivery batch has 5 minutes), not %s", c.ProviderTimeout)
	}
	// An upload takes at most the body's minute, its processing and the 15 s
	// a timed-out upload gives the cancellation.
	if least := time.Minute + c.FileProcessTimeout + 15*time.Second; c.FileUploadMaxLife <= least {
		return c, fmt.Errorf("TOCSIN_FILE_UPLOAD_MAX_LIFE must be longer than an upload can last (%s: a minute for the body, TOCSIN_FILE_PROCESS_TIMEOUT and 15 s), not %s",
			least, c.FileUploadMaxLife)
	}
	for _, o := range c.CodecAllowOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			return c, fmt.Errorf("TOCSIN_CODEC_ALLOW_ORIGINS: %q is not an origin such as http://127.0.0.1:8233", o)
		}
	}
	// Checked here, as the keys are, so that every command refuses a bad
	// entry at its start; internal/app builds the policy that is used.
	if _, err := hooks.NewPolicy(c.HookAllowHosts, c.HookAllowHTTP); err != nil {
		return c, err
	}
	return c, nil
}
