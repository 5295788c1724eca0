// Package api is tocsin's HTTP API: a Fiber app whose operations are declared
// with huma, which generates the OpenAPI document from the same Go types that
// validate requests.
package api

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
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
	"github.com/valyala/fasthttp"
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
	app := fiber.New(fiber.Config{
		AppName: "tocsin",
		// With streamed bodies this is only what fasthttp reads ahead before
		// the handlers run; bufferBodies enforces each operation's limit.
		BodyLimit: 1,
		// Every string Fiber hands out (method, path, parameters, query,
		// headers) is a copy: they reach input structs, logs, metrics
		// labels, workflows and goroutines that outlive the handler, and
		// fasthttp reuses its buffers for the next request.
		Immutable:             true,
		DisableStartupMessage: true,
		ErrorHandler:          errorHandler(d.Logger),
		// Past this many open connections fasthttp answers a new one with a
		// plain-text 503 and closes it (README, "Errors, paging and limits").
		Concurrency: d.Config.HTTPMaxConns,
		// The read timeout covers the request head only: headerReceived
		// gives the body a deadline of its own (bodyTimeout).
		ReadTimeout:  headerTimeout(d.Config.HTTPHeaderTimeout),
		WriteTimeout: 60 * time.Second,
		IdleTimeout:  120 * time.Second,
		// Bodies are streamed so that uploads reach the object store without
		// being held whole in memory; bufferBodies reads every other body
		// into memory within its operation's limit, as fasthttp would.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
	})
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		d.Logger.Error("panic serving request", "request_id", c.Locals(requestid.ConfigDefault.ContextKey), "panic", e)
	}}))
	app.Use(dropOddRequestIDs, requestid.New())
	app.Use(accessLog(d.Logger))
	metrics := newHTTPMetrics(reg)
	registerConnectionMetrics(reg, app.Server())
	if d.DB != nil {
		registerOutboxGauge(reg, d.DB)
	}
	app.Use(metrics.middleware, answerErrors)
	limits := &routeLimits{}
	app.Use(securityHeaders)
	app.Use(bufferBodies(limits))

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
	for _, ct := range append([]string{"application/json", "json"}, directoryJSONTypes...) {
		cfg.Formats[ct] = rest.JSONFormat
	}
	cfg.OnAddOperation = append(cfg.OnAddOperation, describeDirectoryContentTypes)
	cfg.Transformers = append(cfg.Transformers, finishProblem(d.Logger))
	hapi := huma.NewAPI(cfg, withHead{humafiber.New(app, huma.Config{}).Adapter()})
	hapi.UseMiddleware(authenticate(hapi, verifier), checkInput(hapi), boundWork(d.Config.HTTPRequestTimeout))
	d.CheckJSONBody = func(body []byte, schema *huma.Schema) *rest.ProblemDetails {
		return checkJSONBody(hapi.OpenAPI().Components.Schemas, schema, body)
	}

	s := &Server{App: app, API: hapi}
	registerHealth(hapi, d)
	registerWhoami(hapi)
	model.RegisterGeneric(hapi)
	registerAreas(hapi, d)
	boundRequestSchemas(hapi)
	limits.collect(hapi.OpenAPI(), d.Config)
	app.Server().HeaderReceived = limits.headerReceived
	app.Server().Handler = metrics.refuseUnknownMethods(app.Server().Handler)
	app.Server().ErrorHandler = metrics.unreadableRequests(app.Server().ErrorHandler)
	return s
}

// bodyTimeout is how long a request's body may take to arrive once its
// head is read (an import's body moves it forward as data arrives).
const bodyTimeout = 60 * time.Second

// headerTimeout is the time a client has to send a request's head:
// TOCSIN_HTTP_HEADER_TIMEOUT, or bodyTimeout for a configuration not read
// from the environment.
func headerTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		return bodyTimeout
	}
	return d
}

// errUnreadableRequest stands for fasthttp's errors about a request head it
// could not parse. Their text quotes the raw head, bearer token and cookies
// included, so it must never reach an answer or a log.
var errUnreadableRequest = errors.New("the request could not be read: its request line or a header holds a control character, NUL or another byte HTTP does not allow")

// unreadableRequests wraps the server's handler of requests fasthttp could
// not read: the errors Fiber maps to a status of its own (431, 408, 413,
// 405, 502) pass as they are, and every other one, which Fiber would answer
// with the error's text, becomes errUnreadableRequest. The answer gets a
// request id, as every other answer does.
// It is counted in the metrics, under route "unmatched".
func (m *httpMetrics) unreadableRequests(next func(*fasthttp.RequestCtx, error)) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		start := time.Now()
		var small *fasthttp.ErrSmallBuffer
		var netErr net.Error
		if !errors.As(err, &small) && !errors.As(err, &netErr) && !errors.Is(err, fasthttp.ErrBodyTooLarge) &&
			!errors.Is(err, fasthttp.ErrGetOnly) && !strings.Contains(err.Error(), "timeout") {
			err = errUnreadableRequest
		}
		rid := requestid.ConfigDefault.Generator()
		ctx.SetUserValue(requestid.ConfigDefault.ContextKey, rid)
		ctx.Response.Header.Set(fiber.HeaderXRequestID, rid)
		next(ctx, err)
		m.observe(string(ctx.Method()), "unmatched", ctx.Response.StatusCode(), start)
	}
}

// withHead is a huma adapter that serves HEAD on every GET operation not
// marked rest.NoHead, as HTTP asks: the operation runs as for GET
// (authentication, validation and all), and fasthttp sends the answer's
// status and headers without its body.
type withHead struct{ huma.Adapter }

// Handle adds op, and its HEAD twin when op is a GET.
func (a withHead) Handle(op *huma.Operation, handler func(huma.Context)) {
	a.Adapter.Handle(op, handler)
	if op.Method == http.MethodGet && op.Metadata[rest.NoHead] != true {
		head := *op
		head.Method = http.MethodHead
		a.Adapter.Handle(&head, handler)
	}
}

// answerErrors answers a handler's error at once, with the problem the
// error handler makes of it, so that the metrics and the access log around
// it see the status the client gets.
func answerErrors(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return c.App().ErrorHandler(c, err)
	}
	return nil
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
		p := rest.Problem(status, detail)
		switch {
		case errors.As(err, &pd):
			p = pd
		case errors.As(err, &fe):
			status, detail = fe.Code, fe.Message
			if status == http.StatusRequestEntityTooLarge {
				detail = "the request body is larger than the limit"
			}
			p = rest.Problem(status, detail)
		default:
			p = rest.Internal(err)
		}
		rid, _ := c.Locals(requestid.ConfigDefault.ContextKey).(string)
		finish(log, rid, p)
		for k, vs := range p.GetHeaders() {
			for _, v := range vs {
				c.Append(k, v)
			}
		}
		return c.Status(p.Status).JSON(p, "application/problem+json")
	}
}

func accessLog(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			log.Error("error handler failed", "err", err)
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
			"route", routeOf(c),
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

// dropOddRequestIDs removes a client's X-Request-ID that is not a short
// token of letters, digits and ._:- so that a fresh one is made: the id is
// logged and echoed in every problem's instance.
func dropOddRequestIDs(c *fiber.Ctx) error {
	id := c.Request().Header.Peek(fiber.HeaderXRequestID)
	if len(id) == 0 {
		return c.Next()
	}
	ok := len(id) <= 128
	for _, b := range id {
		if !ok {
			break
		}
		ok = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == ':' || b == '-'
	}
	if !ok {
		c.Request().Header.Del(fiber.HeaderXRequestID)
	}
	return c.Next()
}

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
		raw, ok := auth.BearerToken(ctx.Header("Authorization"))
		if !ok {
			writeProblem(api, ctx, rest.Problem(http.StatusUnauthorized, "an Authorization: Bearer token is required").
				WithHeader("WWW-Authenticate", `Bearer realm="tocsin"`))
			return
		}
		p, err := v.Verify(raw)
		var bad *auth.ClaimError
		if errors.As(err, &bad) {
			writeProblem(api, ctx, rest.Invalid("header", "Authorization", err.Error(), nil))
			return
		}
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
			// A tenant id holding a NUL or invalid UTF-8 is bad input
			// (400 naming it), not another tenant.
			if bad := checkParameters(ctx, op); bad != nil {
				writeProblem(api, ctx, bad)
				return
			}
			writeProblem(api, ctx, rest.NotFound("tenant"))
			return
		}
		rid, _ := humafiber.Unwrap(ctx).Locals(requestid.ConfigDefault.ContextKey).(string)
		next(huma.WithContext(ctx, rest.WithRequestID(rest.WithPrincipal(ctx.Context(), p), rid)))
	}
}

// checkInput checks the body bufferBodies read against the operation's
// schema (see checkBody), unless the operation is marked rest.SignedBody
// (it checks its body itself, with rest.Deps.CheckJSONBody, once the
// signature verifies), and refuses parameters holding NUL characters or
// invalid UTF-8.
func checkInput(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		reg := api.OpenAPI().Components.Schemas
		op := ctx.Operation()
		c := humafiber.Unwrap(ctx)
		if body, ok := c.Locals(bodyLocal).([]byte); ok && (op == nil || op.Metadata[rest.SignedBody] != true) {
			if p := checkBody(reg, op, string(c.Request().Header.ContentType()), body); p != nil {
				writeProblem(api, ctx, p)
				return
			}
		}
		if op != nil {
			if p := checkParameters(ctx, op); p != nil {
				writeProblem(api, ctx, p)
				return
			}
			if p := checkForm(ctx, reg, op); p != nil {
				writeProblem(api, ctx, p)
				return
			}
		}
		next(ctx)
	}
}

// boundWork gives the handler of every operation but the uploads (a
// streamed or multipart body, bounded by TOCSIN_FILE_PROCESS_TIMEOUT and
// the body's minute) and those that bound their wait themselves
// (rest.OwnDeadline) a context that ends after limit, so that a request
// waiting for a database connection, a lock or Temporal is answered 503
// rather than held open without end.
func boundWork(limit time.Duration) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if limit <= 0 || op == nil || op.Metadata[rest.StreamBody] == true || op.Metadata[rest.OwnDeadline] == true ||
			(op.RequestBody != nil && op.RequestBody.Content["multipart/form-data"] != nil) {
			next(ctx)
			return
		}
		bounded, cancel := context.WithTimeout(ctx.Context(), limit)
		defer cancel()
		next(huma.WithContext(ctx, bounded))
	}
}

// finishProblem is the transformer that bounds every problem huma writes,
// sets its instance to the request id and logs the cause of a 5xx.
func finishProblem(log *slog.Logger) huma.Transformer {
	return func(ctx huma.Context, _ string, v any) (any, error) {
		if p, ok := v.(*rest.ProblemDetails); ok {
			rid, _ := humafiber.Unwrap(ctx).Locals(requestid.ConfigDefault.ContextKey).(string)
			finish(log, rid, p)
		}
		return v, nil
	}
}

// finish bounds p, sets its instance and logs the cause of a 5xx, which is
// never sent.
func finish(log *slog.Logger, rid string, p *rest.ProblemDetails) {
	p.Bound()
	if rid != "" && p.Instance == "" {
		p.Instance = "urn:request:" + rid
	}
	if p.Status >= 500 {
		log.Error("request failed", "request_id", rid, "status", p.Status, "detail", p.Detail, "err", p.Cause())
	}
}

func writeProblem(api huma.API, ctx huma.Context, p *rest.ProblemDetails) {
	rid, _ := humafiber.Unwrap(ctx).Locals(requestid.ConfigDefault.ContextKey).(string)
	finish(discardLogger(), rid, p)
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
