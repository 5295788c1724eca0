package rest

import (
	"log/slog"

	"github.com/danielgtaylor/huma/v2"

	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/hooks"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/payloadcrypt"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
)

// Deps are what handlers use: they validate, write state through storage and
// start or signal workflows; they never call a channel provider.
type Deps struct {
	Config config.Config
	// Secrets seals and opens stored credentials and signing secrets; the
	// wiring (internal/app) builds it once.
	Secrets *secrets.Box
	// Outbound is the SSRF policy that hook targets and tenants' provider
	// URLs are checked against when saved; the wiring builds it once.
	Outbound *hooks.Policy
	// Codec is the payload codec the codec endpoint serves the Temporal UI
	// with, the Temporal client's own.
	Codec    *payloadcrypt.Codec
	DB       *storage.DB
	Objects  *storage.Objects
	Temporal client.Client
	Logger   *slog.Logger
	// Starts is woken after a transaction that enqueued workflow starts
	// commits (see storage.EnqueueStart); nil when no starter runs in
	// this process (it then hears of them from PostgreSQL).
	Starts StartWaker
	// CheckJSONBody refuses a JSON body holding a NUL character or invalid
	// UTF-8, or giving a property twice, naming the field, as the server
	// does for every buffered JSON body before its operation runs; schema
	// (nil when unknown) tells properties from map keys. An operation
	// marked SignedBody calls it itself once the signature verifies.
	// api.New sets it.
	CheckJSONBody func(body []byte, schema *huma.Schema) *ProblemDetails
}

// StartWaker wakes the workflow starter of this process.
type StartWaker interface{ Wake() }

// WakeStarts wakes the starter of this process, if any.
func (d Deps) WakeStarts() {
	if d.Starts != nil {
		d.Starts.Wake()
	}
}
