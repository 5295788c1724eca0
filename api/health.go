package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/workflows"
)

const description = `tocsin delivers alerts to people over every channel an organisation uses,
and records what happened to every recipient on every channel.

Every operation except the health checks and short-link redirects needs an
` + "`Authorization: Bearer <JWT>`" + ` header. The token's claims are sub (the user),
tenant (the tenant id) and scope (space-separated scopes). An integer in a
path (an id, a tenant; the directory's ids, strings there, alike) is written
in canonical decimal, digits without sign, spaces or leading zeros, or the
answer is a 400 naming it. A tenant id in a path must be the token's tenant,
or the answer is 404. Errors are RFC 9457
problem details (application/problem+json); validation problems list every
failing field as a ValidationFailure. A JSON object gives each property once;
in an object with fixed properties two names that differ only in case are the
same property, while the keys of a free-form map (customFields, GeoJSON
properties) keep their case; a query parameter is given once, a list as one
comma-separated value. The one exception to problem details: while the server
holds its limit of connections, a new connection is answered with a plain-text
503 and closed.`

// HealthStatus answers the health and readiness checks.
type HealthStatus struct {
	Status string            `json:"status" enum:"ok,unavailable" doc:"ok when every check passed."`
	Checks map[string]string `json:"checks,omitempty" doc:"The outcome of each dependency check: ok or the error."`
}

// SmokeResult is the row the smoke workflow wrote.
type SmokeResult struct {
	WorkflowID string    `json:"workflowId" doc:"The workflow that wrote the row; look it up in the Temporal UI." example:"smoke-1001-3c9e"`
	RunID      int64     `json:"runId" doc:"Id of the row written by the worker."`
	CreatedAt  time.Time `json:"createdAt" doc:"When the worker wrote it."`
	ElapsedMs  int64     `json:"elapsedMs" doc:"Time from the request to the answer."`
}

func registerHealth(api huma.API, d rest.Deps) {
	rest.Register(api, rest.Op{
		ID: "getHealth", Method: http.MethodGet, Path: "/healthz", Public: true, Tags: []string{"Operations"},
		Summary: "Liveness: the process is up",
	}, func(ctx context.Context, _ *struct{}) (*rest.Output[HealthStatus], error) {
		return rest.Answer(HealthStatus{Status: "ok"}), nil
	})

	checks := map[string]func(context.Context) error{
		"postgresql": func(ctx context.Context) error { return d.DB.PingContext(ctx) },
		"temporal": func(ctx context.Context) error {
			_, err := d.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
		"minio": func(ctx context.Context) error { return d.Objects.Ping(ctx) },
	}
	rest.Register(api, rest.Op{
		ID: "getReadiness", Method: http.MethodGet, Path: "/readyz", Public: true, Tags: []string{"Operations"},
		Summary:     "Readiness: PostgreSQL, Temporal and MinIO answer",
		Description: "200 when every dependency answers within two seconds; otherwise a 503 problem naming what is down.",
	}, func(ctx context.Context, _ *struct{}) (*rest.Output[HealthStatus], error) {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		res := HealthStatus{Status: "ok", Checks: map[string]string{}}
		var down []string
		for _, name := range []string{"postgresql", "temporal", "minio"} {
			if err := checks[name](ctx); err != nil {
				res.Checks[name] = err.Error()
				down = append(down, name)
				continue
			}
			res.Checks[name] = "ok"
		}
		if len(down) > 0 {
			return nil, rest.Problem(http.StatusServiceUnavailable, "not ready: "+strings.Join(down, ", ")+" unavailable").
				WithHeader("Retry-After", "5")
		}
		return rest.Answer(res), nil
	})

	rest.Register(api, rest.Op{
		ID: "runSmokeCheck", Method: http.MethodPost, Path: "/ops/smoke", Tags: []string{"Operations"},
		Summary: "Prove the whole path: API, Temporal, worker and PostgreSQL",
		Description: "Starts the Smoke workflow, which has the worker write a row to PostgreSQL, and waits up to 30 seconds for it " +
			"(not cut short by TOCSIN_HTTP_REQUEST_TIMEOUT).",
		OwnDeadline: true,
	}, func(ctx context.Context, _ *struct{}) (*rest.Output[SmokeResult], error) {
		start := time.Now()
		tenant := rest.Tenant(ctx)
		id := fmt.Sprintf("smoke-%s-%d", tenant, start.UnixNano())
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		run, err := d.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: id, TaskQueue: d.Config.TemporalTaskQueue,
		}, workflows.Smoke, workflows.SmokeInput{Tenant: tenant})
		if err != nil {
			return nil, rest.Unavailable("temporal", err)
		}
		var rowID int64
		if err := run.Get(ctx, &rowID); err != nil {
			return nil, rest.Unavailable("the worker", err)
		}
		created, err := storage.SmokeRunCreatedAt(ctx, d.DB, tenant, rowID)
		if err != nil {
			return nil, err
		}
		return rest.Answer(SmokeResult{WorkflowID: id, RunID: rowID, CreatedAt: created, ElapsedMs: time.Since(start).Milliseconds()}), nil
	})
}

func registerWhoami(api huma.API) {
	rest.Register(api, rest.Op{
		ID: "getClientRequestContext", Method: http.MethodGet, Path: "/ops/whoami", Tags: []string{"Operations"},
		Summary:     "Show what the server reads from your token",
		Description: "Returns the tenant, user and scopes of the bearer token, and the request id. Any valid token will do.",
	}, func(ctx context.Context, _ *struct{}) (*rest.Output[model.ClientRequestContext], error) {
		p := rest.Caller(ctx)
		return &rest.Output[model.ClientRequestContext]{Body: model.ClientRequestContext{
			RequestID: rest.RequestID(ctx), TenantID: p.Tenant, UserID: p.Subject, Scopes: p.Scopes,
		}}, nil
	})
}

func securitySchemes(publicURL string) map[string]*huma.SecurityScheme {
	scopes := map[string]string{
		"tamarack":         "Alerting: alerts, results, contacts, distribution lists, short URLs and hook subscriptions.",
		"content":          "Files: images and audio.",
		"elm":              "Groups and places: the group tree.",
		"directory:public": "The user directory: profiles, contact information, preferences, groups and metadata.",
	}
	return map[string]*huma.SecurityScheme{
		rest.SchemeBearer: {
			Type: "http", Scheme: "bearer", BearerFormat: "JWT",
			Description: "A JWT with the claims sub, tenant and scope. HS256 with the shared secret in development (mint one with `tocsin token`), RS256 or ES256 from the configured JWKS in production.",
		},
		rest.SchemeOAuth2: {
			Type:        "oauth2",
			Description: "Tokens from the identity provider the server trusts through TOCSIN_JWKS_URL.",
			Flows: &huma.OAuthFlows{
				AuthorizationCode: &huma.OAuthFlow{
					AuthorizationURL: publicURL + "/account/login",
					TokenURL:         publicURL + "/connect/token",
					Scopes:           scopes,
				},
				ClientCredentials: &huma.OAuthFlow{
					TokenURL: publicURL + "/connect/token",
					Scopes:   scopes,
				},
			},
		},
	}
}
