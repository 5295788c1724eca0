// Package hooksubs stores a tenant's hook subscriptions (where and which
// events to deliver, with the sealed signing secret and custom headers) and
// reads their delivery history.
package hooksubs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
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
	ID          int64          `db:"id"`
	URL         string         `db:"url"`
	EventTypes  pq.StringArray `db:"event_types"`
	Active      bool           `db:"active"`
	Description string         `db:"description"`
	// HeadersSealed is the custom headers (a JSON object) sealed with the
	// secrets box, nil when there are none.
	HeadersSealed []byte `db:"headers_encrypted"`
	// PlainHeaders is the JSON object of custom headers written by a version
	// before headers were sealed (a row from before the upgrade, or one that
	// such a version changed during a rolling upgrade), until SealPlainHeaders
	// seals it; {} in every row written since. When not {} it is the newer
	// write and wins over HeadersSealed.
	PlainHeaders   []byte     `db:"headers"`
	DisabledReason string     `db:"disabled_reason"`
	DisabledAt     *time.Time `db:"disabled_at"`
	CreatedAt      time.Time  `db:"created_at"`
	UpdatedAt      time.Time  `db:"updated_at"`
}

const columns = `id, url, event_types, active, description, headers, headers_encrypted, disabled_reason, disabled_at, created_at, updated_at`

// Settings are what a client sets of a subscription.
type Settings struct {
	URL         string
	EventTypes  []string
	Active      bool
	Description string
	// HeadersSealed is the sealed JSON object of the headers sent with
	// every delivery, nil when there are none.
	HeadersSealed []byte
}

// Sorting is how subscriptions may be ordered. url orders by the part of
// the url answers show whole, the scheme, host and port: an order by the
// rest would tell, against urls of one's own, what the masks hide.
var Sorting = storage.Sorting{
	Columns: map[string]string{
		"id": "id", "url": `substring(url from '^[^:/?#]+://[^/?#]*')`, "active": "active", "createdat": "created_at", "updatedat": "updated_at",
	},
	Default: "id", TieBreak: "id",
}

// Get returns the tenant's subscription id, storage.ErrNotFound when it has none.
func (s *Store) Get(ctx context.Context, tenant string, id int64) (Subscription, error) {
	return storage.GetOne[Subscription](ctx, s.DB, "load subscription", `SELECT `+columns+` FROM hook_subscriptions WHERE id = $1 AND tenant_id = $2`, id, tenant)
}

// A subscription may be sent TestBurst test events at once, then one
// every TestInterval: each test is a request to its target, which a caller
// could otherwise have tocsin repeat as fast as it can ask.
const (
	TestBurst    = 5
	TestInterval = 10 * time.Second
)

// ClaimTest records a test of the tenant's subscription id now, unless its
// tests are over the limit (TestBurst at once, then one every
// TestInterval): then it answers how long until the next may be sent, and
// records nothing. A missing subscription is storage.ErrNotFound. The
// tests sent so far are paid for until tests_paid_until, TestInterval
// each; one more is taken while that stays within TestBurst intervals.
func (s *Store) ClaimTest(ctx context.Context, tenant string, id int64) (wait time.Duration, err error) {
	var got struct {
		Claimed bool    `db:"claimed"`
		Wait    float64 `db:"wait"`
	}
	err = s.DB.GetContext(ctx, &got, `
		WITH sub AS (SELECT id, greatest(coalesce(tests_paid_until, now()), now()) + $3 * interval '1 second' AS paid
			FROM hook_subscriptions WHERE id = $1 AND tenant_id = $2 FOR UPDATE),
		claimed AS (UPDATE hook_subscriptions h SET tests_paid_until = sub.paid FROM sub
			WHERE h.id = sub.id AND sub.paid <= now() + $4 * interval '1 second' RETURNING h.id)
		SELECT EXISTS (SELECT 1 FROM claimed) AS claimed, extract(epoch FROM sub.paid - now())::float8 - $4 AS wait FROM sub`,
		id, tenant, TestInterval.Seconds(), TestBurst*TestInterval.Seconds())
	if errors.Is(err, sql.ErrNoRows) {
		return 0, storage.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("claim subscription test: %w", err)
	}
	if got.Claimed {
		return 0, nil
	}
	return max(time.Duration(got.Wait*float64(time.Second)), time.Second), nil
}

// NewID reserves the id of a subscription about to be created, so that
// what is sealed for it can be bound to it before Create.
func (s *Store) NewID(ctx context.Context) (int64, error) {
	var id int64
	if err := s.DB.GetContext(ctx, &id, `SELECT nextval(pg_get_serial_sequence('hook_subscriptions', 'id'))`); err != nil {
		return 0, fmt.Errorf("reserve subscription id: %w", err)
	}
	return id, nil
}

// MaxPerTenant is the most hook subscriptions a tenant may have, active
// or not. Every event is one delivery to each of its tenant's matching
// subscriptions, so the cap bounds what one event costs: the workflow
// starts of the dispatcher's claim (dispatch.Dispatcher) and the
// deliveries Temporal then runs. A tenant that had more before the cap
// keeps them, and their deliveries; it creates none until it has fewer.
const MaxPerTenant = 100

// ErrTooMany is Create's error when the tenant has MaxPerTenant
// subscriptions (or more) already.
var ErrTooMany = fmt.Errorf("a tenant has at most %d hook subscriptions", MaxPerTenant)

// Create stores a new subscription of the tenant under the id NewID
// reserved, with its sealed signing secret, unless the tenant has
// MaxPerTenant subscriptions already (ErrTooMany). The count and the
// insert run under a transaction advisory lock of the tenant's, so two
// creates at once cannot both pass the cap.
func (s *Store) Create(ctx context.Context, tenant string, id int64, set Settings, sealedSecret []byte) (Subscription, error) {
	var r Subscription
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('hook-subscriptions:' || $1, 0))`, tenant); err != nil {
			return fmt.Errorf("lock the tenant's subscriptions: %w", err)
		}
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT count(*) FROM (SELECT 1 FROM hook_subscriptions WHERE tenant_id = $1 LIMIT $2) s`,
			tenant, MaxPerTenant); err != nil {
			return fmt.Errorf("count subscriptions: %w", err)
		}
		if n >= MaxPerTenant {
			return ErrTooMany
		}
		if err := tx.GetContext(ctx, &r, `
			INSERT INTO hook_subscriptions (id, tenant_id, url, event_types, active, description, headers_encrypted, secret_encrypted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+columns,
			id, tenant, set.URL, pq.StringArray(set.EventTypes), set.Active, set.Description, set.HeadersSealed, sealedSecret); err != nil {
			return fmt.Errorf("insert subscription: %w", err)
		}
		return nil
	})
	return r, err
}

// List returns a page of the tenant's subscriptions in order (an ORDER BY
// list built from Sorting) and how many it has (as storage.CountRows
// counts them).
func (s *Store) List(ctx context.Context, tenant, order string, limit, offset int) ([]Subscription, storage.Total, error) {
	return storage.Page[Subscription](ctx, s.DB, "subscriptions", storage.CountRows(`FROM hook_subscriptions WHERE tenant_id = $1`),
		`SELECT `+columns+` FROM hook_subscriptions WHERE tenant_id = $1 ORDER BY `+order, []any{tenant}, limit, offset)
}

// Update replaces the settings of the tenant's subscription id; making it
// active clears why it was disabled. storage.ErrNotFound when it has none.
func (s *Store) Update(ctx context.Context, tenant string, id int64, set Settings) (Subscription, error) {
	return storage.GetOne[Subscription](ctx, s.DB, "update subscription", `
		UPDATE hook_subscriptions SET url = $3, event_types = $4, active = $5, description = $6,
			headers_encrypted = $7, headers = '{}',
			disabled_reason = CASE WHEN $5 THEN '' ELSE disabled_reason END,
			disabled_at = CASE WHEN $5 THEN NULL ELSE disabled_at END,
			updated_at = now()
		WHERE id = $1 AND tenant_id = $2 RETURNING `+columns,
		id, tenant, set.URL, pq.StringArray(set.EventTypes), set.Active, set.Description, set.HeadersSealed)
}

// PlainHeaderRow is a subscription whose custom headers are still stored
// in plain text.
type PlainHeaderRow struct {
	ID      int64  `db:"id"`
	Tenant  string `db:"tenant_id"`
	Headers []byte `db:"headers"`
}

// WithPlainHeaders returns up to limit subscriptions, of every tenant,
// that hold custom headers in plain text: written before headers were
// sealed, or since by an instance of such a version, sealed or not.
func (s *Store) WithPlainHeaders(ctx context.Context, limit int) ([]PlainHeaderRow, error) {
	return storage.SelectAll[PlainHeaderRow](ctx, s.DB, "subscriptions with plain headers", `
		SELECT id, tenant_id, headers FROM hook_subscriptions
		WHERE headers <> '{}'::jsonb ORDER BY id LIMIT $1`, limit)
}

// SealPlainHeaders replaces the headers of r, sealed or not, with sealed
// (its plain headers sealed) and empties the plain ones, unless the
// subscription changed since it was read; it reports whether it did.
func (s *Store) SealPlainHeaders(ctx context.Context, r PlainHeaderRow, sealed []byte) (bool, error) {
	res, err := s.DB.ExecContext(ctx, `
		UPDATE hook_subscriptions SET headers_encrypted = $4, headers = '{}'
		WHERE id = $1 AND tenant_id = $2 AND headers = $3::jsonb`,
		r.ID, r.Tenant, string(r.Headers), sealed)
	if err != nil {
		return false, fmt.Errorf("seal headers: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
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
		"responsestatus": "response_status NULLS LAST", "outcome": "outcome",
	},
	Default: "requested_at DESC", TieBreak: "id DESC",
}

// History returns a page of the attempts of the last 30 days to deliver to
// the tenant's subscription id, in order (an ORDER BY list built from
// HistorySorting), and how many there are (as storage.CountRows counts
// them).
func (s *Store) History(ctx context.Context, tenant string, id int64, order string, limit, offset int) ([]Attempt, storage.Total, error) {
	const where = `tenant_id = $1 AND subscription_id = $2 AND requested_at >= now() - interval '30 days'`
	return storage.Page[Attempt](ctx, s.DB, "history", storage.CountRows(`FROM hook_attempts WHERE `+where),
		`SELECT `+attemptColumns+` FROM hook_attempts WHERE `+where+` ORDER BY `+order, []any{tenant, id}, limit, offset)
}

// Attempt returns the tenant's delivery attempt id.
func (s *Store) Attempt(ctx context.Context, tenant string, id int64) (Attempt, error) {
	return storage.GetOne[Attempt](ctx, s.DB, "read attempt", `SELECT `+attemptColumns+` FROM hook_attempts WHERE id = $1 AND tenant_id = $2`, id, tenant)
}
