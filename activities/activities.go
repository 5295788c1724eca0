// Package activities holds the side effects of tocsin's workflows: database
// writes, channel deliveries, hook requests, file encoding. Activities are
// methods on Activities, which holds the clients they use; the worker
// registers one value of it.
package activities

import (
	"context"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/storage"
)

// Activities holds the clients activities use.
type Activities struct {
	Config  config.Config
	DB      *storage.DB
	Objects *storage.Objects
	Logger  *slog.Logger
	// Senders deliver messages, one per configured channel.
	Senders channels.Senders
	// Destinations lists the tenants' destinations of the broadcast-style
	// channels (team-chat targets, accounts, CAP endpoints).
	Destinations Destinations
	// Hooks delivers events to hook subscriptions.
	Hooks *HookSender
	// Metrics receives the activities' own series (tocsin_deliveries_total).
	Metrics prometheus.Registerer
	// LocalSlots is the local-activity slots of the lane these activities
	// run in (worker.New sets it): a tenant runs at most half of them with
	// deliveries at once (see takeLocalShare). Zero bounds nothing.
	LocalSlots int

	// localMu guards localHeld, the local-activity deliveries each tenant
	// runs now in this lane.
	localMu   sync.Mutex
	localHeld map[string]int

	// st is what the alert activities keep between calls (see state),
	// set up once, or shared with another Activities (ShareState).
	stOnce sync.Once
	st     *alertState
}

// ShareState makes a keep its per-tenant rate limiters, renderers and
// delivery counter in b's, so the two lanes of one worker process throttle
// a tenant's channel together. Call it before a is used. (A function, not
// a method: every exported method of Activities is an activity.)
func ShareState(a, b *Activities) { a.st = b.state() }

// SmokeRecord is what the smoke activity writes.
type SmokeRecord struct {
	Tenant     string
	WorkflowID string
}

// RecordSmoke writes the smoke row once per workflow (a retry returns the
// same row) and returns its id.
func (a *Activities) RecordSmoke(ctx context.Context, r SmokeRecord) (int64, error) {
	return storage.RecordSmokeRun(ctx, a.DB, r.Tenant, r.WorkflowID)
}
