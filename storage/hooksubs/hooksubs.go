// Package hooksubs stores a tenant's hook subscriptions (where and which
// events to deliver, with the sealed signing secret) and reads their
// delivery history.
package hooksubs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Store is the repository of hook subscriptions.
type Store struct {
	DB *storage.DB
}

// New returns the Store over db.
func New(db *storage.DB) *Store { return &Store{DB: db} }

// Subscription is a hook subscription (without its secret).
type Subscription struct {
	ID             int64          `db:"id"`
	URL            string         `db:"url"`
	EventTypes     pq.StringArray `db:"event_types"`
	Active         bool           `db:"active"`
	Description    string         `db:"description"`
	Headers        []byte         `db:"headers"`
	DisabledReason string         `db:"disabled_reason"`
	DisabledAt     *time.Time     `db:"disabled_at"`
	CreatedAt      time.Time      `db:"created_at"`
	UpdatedAt      time.Time      `db:"updated_at"`
}

const columns = `id, url, event_types, active, description, headers, disabled_reason, disabled_at, created_at, updated_at`

// Settings are what a client sets of a subscription.
type Settings struct {
	URL         string
	EventTypes  []string
	Active      bool
	Description string
	// Headers are sent with every delivery (a JSON object).
	Headers json.RawMessage
}

// Sorting is how subscriptions may be ordered.
var Sorting = storage.Sorting{
	Columns: map[string]string{
		"id": "id", "url": "url", "active": "active", "createdat": "created_at", "updatedat": "updated_at",
	},
	Default: "id", TieBreak: "id",
}

// Get returns the tenant's subscription id, storage.ErrNotFound when it has none.
func (s *Store) Get(ctx context.Context, tenant string, id int64) (Subscription, error) {
	return storage.GetOne[Subscription](ctx, s.DB, "load subscription", `SELECT `+columns+` FROM hook_subscriptions WHERE id = $1 AND tenant_id = $2`, id, tenant)
}

// Create stores a new subscription of the tenant with its sealed signing secret.
func (s *Store) Create(ctx context.Context, tenant string, set Settings, sealedSecret []byte) (Subscription, error) {
	var r Subscription
	if err := s.DB.GetContext(ctx, &r, `
		INSERT INTO hook_subscriptions (tenant_id, url, event_types, active, description, headers, secret_encrypted)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+columns,
		tenant, set.URL, pq.StringArray(set.EventTypes), set.Active, set.Description, []byte(set.Headers), sealedSecret); err != nil {
		return r, fmt.Errorf("insert subscription: %w", err)
	}
	return r, nil
}

// List returns a page of the tenant's subscriptions in order (an ORDER BY
// list built from Sorting) and how many it has.
func (s *Store) List(ctx context.Context, tenant, order string, limit, offset int) ([]Subscription, int64, error) {
	return storage.Page[Subscription](ctx, s.DB, "subscriptions", `SELECT count(*) FROM hook_subscriptions WHERE tenant_id = $1`,
		`SELECT `+columns+` FROM hook_subscriptions WHERE tenant_id = $1 ORDER BY `+order, []any{tenant}, limit, offset)
}

// Update replaces the settings of the tenant's subscription id; making it
// active clears why it was disabled. storage.ErrNotFound when it has none.
func (s *Store) Update(ctx context.Context, tenant string, id int64, set Settings) (Subscription, error) {
	return storage.GetOne[Subscription](ctx, s.DB, "update subscription", `
		UPDATE hook_subscriptions SET url = $3, event_types = $4, active = $5, description = $6, headers = $7,
			disabled_reason = CASE WHEN $5 THEN '' ELSE disabled_reason END,
			disabled_at = CASE WHEN $5 THEN NULL ELSE disabled_at END,
			updated_at = now()
		WHERE id = $1 AND tenant_id = $2 RETURNING `+columns,
		id, tenant, set.URL, pq.StringArray(set.EventTypes), set.Active, set.Description, []byte(set.Headers))
}

// Delete removes the tenant's subscription id, storage.ErrNotFound when it has none.
func (s *Store) Delete(ctx context.Context, tenant string, id int64) error {
	return storage.ExecOne(ctx, s.DB, "delete subscription", `DELETE FROM hook_subscriptions WHERE id = $1 AND tenant_id = $2`, id, tenant)
}

// Attempt is one delivery attempt of an event to a subscription.
type Attempt struct {
	ID             int64      `db:"id"`
	SubscriptionID int64      `db:"subscription_id"`
	EventID        string     `db:"event_id"`
	EventType      string     `db:"event_type"`
	Attempt        int        `db:"attempt"`
	RequestedAt    time.Time  `db:"requested_at"`
	ResponseStatus *int       `db:"response_status"`
	LatencyMs      int64      `db:"latency_ms"`
	Outcome        string     `db:"outcome"`
	Error          string     `db:"error"`
	NextRetryAt    *time.Time `db:"next_retry_at"`
}

const attemptColumns = `id, subscription_id, event_id, event_type, attempt, requested_at, response_status, latency_ms, outcome, error, next_retry_at`

// HistorySorting is how a subscription's attempts may be ordered.
var HistorySorting = storage.Sorting{
	Columns: map[string]string{
		"requestedat": "requested_at", "attempt": "attempt", "eventtype": "event_type",
		"responsestatus": "response_status", "outcome": "outcome",
	},
	Default: "requested_at DESC", TieBreak: "id DESC",
}

// History returns a page of the attempts of the last 30 days to deliver to
// the tenant's subscription id, in order (an ORDER BY list built from
// HistorySorting), and how many there are.
func (s *Store) History(ctx context.Context, tenant string, id int64, order string, limit, offset int) ([]Attempt, int64, error) {
	const where = `tenant_id = $1 AND subscription_id = $2 AND requested_at >= now() - interval '30 days'`
	return storage.Page[Attempt](ctx, s.DB, "history", `SELECT count(*) FROM hook_attempts WHERE `+where,
		`SELECT `+attemptColumns+` FROM hook_attempts WHERE `+where+` ORDER BY `+order, []any{tenant, id}, limit, offset)
}

// Attempt returns the tenant's delivery attempt id.
func (s *Store) Attempt(ctx context.Context, tenant string, id int64) (Attempt, error) {
	return storage.GetOne[Attempt](ctx, s.DB, "read attempt", `SELECT `+attemptColumns+` FROM hook_attempts WHERE id = $1 AND tenant_id = $2`, id, tenant)
}
