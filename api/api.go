// Package api is tocsin's HTTP API: a Fiber app whose operations are declared
// with huma, which generates the OpenAPI document from the same Go types that
// validate requests.
package api

import (
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gofiber/fiber/v2/middleware/requestid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
)

// Version is the API version written into the OpenAPI document.
const Version = "1.0.0"

// Server is the HTTP API with its OpenAPI description.
type Server struct {
	App *fiber.App
	API huma.API
}

// New builds the HTTP API. verifier checks bearer tokens; reg receives the
// HTTP metrics and is served at /metrics.
func New(d rest.Deps, verifier *auth.Verifier, reg *prometheus.Registry) *Server {
	bodyLimit := int(d.Config.FileSizeLimit) + 1<<20
	if d.Config.BodyLimit > bodyLimit {
		bodyLimit = d.Config.BodyLimit
	}
	app := fiber.New(fiber.Config{
		AppName: "tocsin",
		// With streamed bodies this is only what fasthttp reads ahead before
		// the handlers run; bufferBodies enforces bodyLimit.
		BodyLimit:             1,
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler(d.Logger),
		ReadTimeout:           60 * time.Second,
		WriteTimeout:          60 * time.Second,
		IdleTimeout:           120 * time.Second,
		// Bodies are streamed so that uploads reach the object store without
		// being held whole in memory; bufferBodies reads every other body
		// into memory within bodyLimit, as fasthttp would.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		d.Logger.Error("panic serving request", "request_id", c.Locals(requestid.ConfigDefault.ContextKey), "panic", e)
	}}))
	app.Use(requestid.New())
	app.Use(accessLog(d.Logger))
	app.Use(newHTTPMetrics(reg).middleware)
	streamed := &streamedRoutes{}
	app.Use(bufferBodies(bodyLimit, streamed))

	app.Get("/metrics", adapt(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})))
	registerCodec(app, d, verifier)

	cfg := huma.DefaultConfig("tocsin", Version)
	cfg.CreateHooks = nil // no $schema links in responses
	cfg.Info.Description = description
	cfg.Info.License = &huma.License{Name: "MIT", Identifier: "MIT"}
	cfg.Servers = []*huma.Server{{URL: d.Config.PublicURL, Description: "this tocsin server"}}
	cfg.Components.SecuritySchemes = securitySchemes(d.Config.PublicURL)
	// DefaultConfig hands out huma's shared format map: copy it before adding
	// to it, or servers built concurrently (parallel tests) race on it.
	cfg.Formats = maps.Clone(cfg.Formats)
	for _, ct := range directoryJSONTypes {
		cfg.Formats[ct] = huma.DefaultJSONFormat
	}
	cfg.OnAddOperation = append(cfg.OnAddOperation, describeDirectoryContentTypes)
	hapi := humafiber.New(app, cfg)
	hapi.UseMiddleware(authenticate(hapi, verifier))

	s := &Server{App: app, API: hapi}
	registerHealth(hapi, d)
	registerWhoami(hapi)
	model.RegisterGeneric(hapi)
	registerAreas(hapi, d)
	streamed.collect(hapi.OpenAPI())
	return s
}

// directoryJSONTypes are the content types the directory interface accepts
// for JSON bodies besides application/json.
var directoryJSONTypes = []string{"application/json-patch+json", "text/json", "application/*+json"}

// describeDirectoryContentTypes lists those content types on the directory
// operations' request bodies in the document.
func describeDirectoryContentTypes(_ *huma.OpenAPI, op *huma.Operation) {
	if !strings.Contains(op.Path, "/directory/") || op.RequestBody == nil {
		return
	}
	mt, ok := op.RequestBody.Content["application/json"]
	if !ok {
		return
	}
	for _, ct := range directoryJSONTypes {
		op.RequestBody.Content[ct] = mt
	}
}

func adapt(h http.Handler) fiber.Handler {
	fh := fasthttpadaptor.NewFastHTTPHandler(h)
	return func(c *fiber.Ctx) error {
		fh(c.Context())
		return nil
	}
}

// errorHandler answers every error that reaches Fiber (no such route, body
// too large, a handler's error) with a problem.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		status := http.StatusInternalServerError
		detail := "internal error"
		var fe *fiber.Error
		var pd *rest.ProblemDetails
		switch {
		case errors.As(err, &pd):
			status, detail = pd.Status, pd.Detail
		case errors.As(err, &fe):
			status, detail = fe.Code, fe.Message
			if status == http.StatusRequestEntityTooLarge {
				detail = "the request body is larger than the limit"
			}
		default:
			log.Error("unhandled error", "request_id", c.Locals(requestid.ConfigDefault.ContextKey), "err", err)
		}
		p := rest.Problem(status, detail)
		if rid, ok := c.Locals(requestid.ConfigDefault.ContextKey).(string); ok {
			p.Instance = "urn:request:" + rid
		}
		return c.Status(status).JSON(p, "application/problem+json")
	}
}

func accessLog(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				log.Error("error handler failed", "err", herr)
			}
			err = nil
		}
		status := c.Response().StatusCode()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		if c.Path() == "/metrics" || c.Path() == "/healthz" {
			level = slog.LevelDebug
		}
		attrs := []any{
			"request_id", c.Locals(requestid.ConfigDefault.ContextKey),
			"method", c.Method(),
			"route", c.Route().Path,
			"status", status,
			"duration_ms", time.Since(start).Milliseconds(),
		}
		if t, ok := c.Locals(tenantLocal).(string); ok {
			attrs = append(attrs, "tenant", t)
		}
		log.Log(c.UserContext(), level, "request", attrs...)
		return err
	}
}

const tenantLocal = "tocsin.tenant"

// authenticate checks the bearer token, the scope an operation needs and the
// tenant in its path. A path tenant that is not the token's is a 404, so the
// existence of other tenants' data is never revealed.
func authenticate(api huma.API, v *auth.Verifier) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op == nil || len(op.Security) == 0 {
			next(ctx)
			return
		}
		raw, ok := strings.CutPrefix(ctx.Header("Authorization"), "Bearer ")
		if !ok || strings.TrimSpace(raw) == "" {
			writeProblem(api, ctx, rest.Problem(http.StatusUnauthorized, "an Authorization: Bearer token is required").
				WithHeader("WWW-Authenticate", `Bearer realm="tocsin"`))
			return
		}
		p, err := v.Verify(strings.TrimSpace(raw))
		if err != nil {
			writeProblem(api, ctx, rest.Problem(http.StatusUnauthorized, err.Error()).
				WithHeader("WWW-Authenticate", `Bearer realm="tocsin", error="invalid_token"`))
			return
		}
		humafiber.Unwrap(ctx).Locals(tenantLocal, p.Tenant)
		if scope, _ := op.Metadata["scope"].(string); scope != "" && !p.HasScope(scope) {
			writeProblem(api, ctx, rest.Problem(http.StatusForbidden, "the token lacks the scope "+scope))
			return
		}
		if strings.Contains(op.Path, "{tenantId}") && ctx.Param("tenantId") != p.Tenant {
			writeProblem(api, ctx, rest.NotFound("tenant"))
			return
		}
		rid, _ := humafiber.Unwrap(ctx).Locals(requestid.ConfigDefault.ContextKey).(string)
		next(huma.WithContext(ctx, rest.WithRequestID(rest.WithPrincipal(ctx.Context(), p), rid)))
	}
}

func writeProblem(api huma.API, ctx huma.Context, p *rest.ProblemDetails) {
	for k, vs := range p.GetHeaders() {
		for _, v := range vs {
			ctx.AppendHeader(k, v)
		}
	}
	ctx.SetHeader("Content-Type", "application/problem+json")
	ctx.SetStatus(p.Status)
	_ = api.Marshal(ctx.BodyWriter(), "application/json", p)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
