// Package etn is emergency telephone notification: voice calls to every
// phone number inside an alert's area, from contacts' locations and imported
// address-point lists, with a per-tenant limit of calls in progress that
// holds across workers (Slots).
package etn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/storage"
)

// New returns the ETN Sender: the voice provider in c, throttled by slots.
func New(c voice.Config, slots *Slots) *voice.Sender {
	c.Channel = channels.Etn
	c.Throttle = slots
	return voice.New(c)
}

// DefaultLease bounds how long a call holds its slot when its final status
// callback never arrives.
const DefaultLease = 10 * time.Minute

// Slots limits a tenant's ETN calls in progress to Limit. A call holds a
// slot (a row of etn_call_slots) from its request until its final status
// callback releases it or its lease runs out, so the limit holds however
// many workers place calls.
type Slots struct {
	DB    *storage.DB
	Limit int
	// Lease defaults to DefaultLease; Poll (how often a waiting call looks
	// for a free slot) to 200ms.
	Lease time.Duration
	Poll  time.Duration
}

var _ voice.Throttle = (*Slots)(nil)

// Acquire waits until the tenant has a free slot and gives it to holder.
func (s *Slots) Acquire(ctx context.Context, tenant, holder string) error {
	limit := max(1, s.Limit)
	lease, poll := s.Lease, s.Poll
	if lease <= 0 {
		lease = DefaultLease
	}
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO etn_call_slots (tenant_id, slot)
		SELECT $1, g FROM generate_series(1, $2::int) g ON CONFLICT DO NOTHING`, tenant, limit); err != nil {
		return fmt.Errorf("create call slots: %w", err)
	}
	for {
		var slot []int
		err := s.DB.SelectContext(ctx, &slot, `
			UPDATE etn_call_slots s SET holder = $3, expires_at = now() + make_interval(secs => $4)
			FROM (SELECT slot FROM etn_call_slots
				WHERE tenant_id = $1 AND slot <= $2 AND (holder IS NULL OR holder = $3 OR expires_at < now())
				ORDER BY (holder = $3) DESC NULLS LAST, slot LIMIT 1 FOR UPDATE SKIP LOCKED) f
			WHERE s.tenant_id = $1 AND s.slot = f.slot RETURNING s.slot`,
			tenant, limit, holder, lease.Seconds())
		if err != nil {
			return fmt.Errorf("take call slot: %w", err)
		}
		if len(slot) > 0 {
			return nil
		}
		wait := poll/2 + rand.N(poll)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// Release frees the slot holder has, if any.
func (s *Slots) Release(ctx context.Context, tenant, holder string) error {
	if _, err := s.DB.ExecContext(ctx, `UPDATE etn_call_slots SET holder = NULL, expires_at = NULL
		WHERE tenant_id = $1 AND holder = $2`, tenant, holder); err != nil {
		return fmt.Errorf("release call slot: %w", err)
	}
	return nil
}

// InUse counts the tenant's held slots.
func (s *Slots) InUse(ctx context.Context, tenant string) (int, error) {
	var n int
	err := s.DB.GetContext(ctx, &n, `SELECT count(*) FROM etn_call_slots
		WHERE tenant_id = $1 AND holder IS NOT NULL AND expires_at > now()`, tenant)
	return n, err
}
