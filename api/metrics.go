package api

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/requestid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
)

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tocsin_http_requests_total",
			Help: "HTTP requests served, by method, route template and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tocsin_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by method, route template and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tocsin_http_requests_in_flight",
			Help: "HTTP requests being served now.",
		}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight)
	return m
}

// registerConnectionMetrics adds the connections the server holds and the
// ones it refused for being over TOCSIN_HTTP_MAX_CONNS: fasthttp refuses
// them before any handler or log sees them.
func registerConnectionMetrics(reg prometheus.Registerer, s *fasthttp.Server) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tocsin_http_connections",
		Help: "Client connections the API holds now, idle keep-alive ones included; TOCSIN_HTTP_MAX_CONNS bounds them.",
	}, func() float64 { return float64(s.GetCurrentConcurrency()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "tocsin_http_connections_refused_total",
			Help: "Client connections answered 503 and closed at once because TOCSIN_HTTP_MAX_CONNS connections were open.",
		}, func() float64 { return float64(s.GetRejectedConnectionsCount()) }))
}

// registerOutboxGauge adds the depth of the workflow-start outbox, read from
// the database at each scrape (NaN when it cannot be read in 2 s).
func registerOutboxGauge(reg prometheus.Registerer, db *storage.DB) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tocsin_workflow_starts_pending",
		Help: "Workflow start requests that accepted work (alerts, verifications, file processing, hook deliveries) wrote and that are not started in Temporal yet; it grows while Temporal cannot be reached.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := storage.PendingStarts(ctx, db)
		if err != nil {
			return math.NaN()
		}
		return float64(n)
	}))
}

// middleware records every request under its route template, never the raw
// path, so ids in paths do not explode the series count.
func (m *httpMetrics) middleware(c *fiber.Ctx) error {
	start := time.Now()
	m.inFlight.Inc()
	defer m.inFlight.Dec()
	err := c.Next()
	m.observe(c.Method(), routeOf(c), c.Response().StatusCode(), start)
	return err
}

// observe counts a request answered with status, served since start.
func (m *httpMetrics) observe(method, route string, status int, start time.Time) {
	labels := prometheus.Labels{"method": methodLabel(method), "route": route, "status": strconv.Itoa(status)}
	m.requests.With(labels).Inc()
	m.duration.With(labels).Observe(time.Since(start).Seconds())
}

// routeLocal holds the route template of a request that bufferBodies
// answered before the router reached its operation.
const routeLocal = "tocsin.route"

// routeOf is the route template of the request c, or "unmatched" when no
// operation has it.
func routeOf(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "/" && r.Path != "" {
		// The router's own string, cloned all the same: a label value
		// must never share memory that a later request may reuse.
		return strings.Clone(r.Path)
	}
	if r, ok := c.Locals(routeLocal).(string); ok {
		return r
	}
	return "unmatched"
}

// methodLabel is the method as a label value: the standard methods as they
// are, anything else (a typo, an attacker's random token) as "OTHER", so the
// series stay few and every value is valid UTF-8 and owned by the label.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return strings.Clone(m)
	}
	return "OTHER"
}

// refuseUnknownMethods answers a request whose method is none of the
// standard ones before Fiber sees it (Fiber would answer a plain-text 400
// that no middleware records): a problem with its instance, counted in the
// metrics under method OTHER.
func (m *httpMetrics) refuseUnknownMethods(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if methodLabel(string(ctx.Method())) != "OTHER" {
			next(ctx)
			return
		}
		start := time.Now()
		rid := requestid.ConfigDefault.Generator()
		p := rest.Problem(http.StatusBadRequest, "unknown HTTP method; use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS")
		p.Instance = "urn:request:" + rid
		body, _ := json.Marshal(p)
		ctx.Response.Header.Set(fiber.HeaderXRequestID, rid)
		ctx.Response.Header.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		ctx.SetConnectionClose()
		ctx.SetStatusCode(http.StatusBadRequest)
		ctx.SetContentType("application/problem+json")
		ctx.SetBody(body)
		m.observe("OTHER", "unmatched", http.StatusBadRequest, start)
	}
}
