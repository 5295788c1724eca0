package channelstate

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/storage"
)

// ProviderSettings is a channel's sealed provider settings.
type ProviderSettings struct {
	Channel   string    `db:"channel"`
	Sealed    []byte    `db:"sealed"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// Providers keeps each tenant's sealed provider settings per channel
// (channel_providers).
type Providers struct {
	DB *storage.DB
}

// Get returns the tenant's settings of channel, or storage.ErrNotFound.
func (s *Providers) Get(ctx context.Context, tenant, channel string) (ProviderSettings, error) {
	var r ProviderSettings
	err := s.DB.GetContext(ctx, &r, `SELECT channel, sealed, created_at, updated_at FROM channel_providers WHERE tenant_id = $1 AND channel = $2`, tenant, channel)
	return r, storage.NotFound(err)
}

// UpdatedAt returns when the tenant's settings of channel last changed, or
// storage.ErrNotFound.
func (s *Providers) UpdatedAt(ctx context.Context, tenant, channel string) (time.Time, error) {
	var t time.Time
	err := s.DB.GetContext(ctx, &t, `SELECT updated_at FROM channel_providers WHERE tenant_id = $1 AND channel = $2`, tenant, channel)
	return t, storage.NotFound(err)
}

// List returns the settings of every channel the tenant configured, by channel.
func (s *Providers) List(ctx context.Context, tenant string) ([]ProviderSettings, error) {
	var rows []ProviderSettings
	if err := s.DB.SelectContext(ctx, &rows, `SELECT channel, sealed, created_at, updated_at FROM channel_providers WHERE tenant_id = $1 ORDER BY channel`, tenant); err != nil {
		return nil, fmt.Errorf("list channel settings: %w", err)
	}
	return rows, nil
}

// Put stores sealed as the tenant's settings of channel and reports whether
// they were created.
func (s *Providers) Put(ctx context.Context, tenant, channel string, sealed []byte) (ProviderSettings, bool, error) {
	var r struct {
		ProviderSettings
		Created bool `db:"created"`
	}
	err := s.DB.GetContext(ctx, &r, `
		INSERT INTO channel_providers (tenant_id, channel, sealed) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, channel) DO UPDATE SET sealed = excluded.sealed, updated_at = clock_timestamp()
		RETURNING channel, sealed, created_at, updated_at, (xmax = 0) AS created`, tenant, channel, sealed)
	if err != nil {
		return ProviderSettings{}, false, fmt.Errorf("store channel settings: %w", err)
	}
	return r.ProviderSettings, r.Created, nil
}

// Delete removes the tenant's settings of channel; storage.ErrNotFound when none.
func (s *Providers) Delete(ctx context.Context, tenant, channel string) error {
	return storage.ExecOne(ctx, s.DB, "delete channel settings", `DELETE FROM channel_providers WHERE tenant_id = $1 AND channel = $2`, tenant, channel)
}
