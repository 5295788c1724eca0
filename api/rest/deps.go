package rest

import (
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage"
)

// Deps are what handlers use: they validate, write state through storage and
// start or signal workflows; they never call a channel provider.
type Deps struct {
	Config config.Config
	// Secrets seals and opens stored credentials and signing secrets; the
	// wiring (internal/app) builds it once.
	Secrets  *secrets.Box
	DB       *storage.DB
	Objects  *storage.Objects
	Temporal client.Client
	Logger   *slog.Logger
	// Starts is woken after a transaction that enqueued workflow starts
	// commits (see storage.EnqueueStart); nil when no starter runs in
	// this process (it then hears of them from PostgreSQL).
	Starts StartWaker
}

// StartWaker wakes the workflow starter of this process.
type StartWaker interface{ Wake() }

// WakeStarts wakes the starter of this process, if any.
func (d Deps) WakeStarts() {
	if d.Starts != nil {
		d.Starts.Wake()
	}
}
