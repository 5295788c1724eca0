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
}
