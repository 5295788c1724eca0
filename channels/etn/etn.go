// Package etn is emergency telephone notification: voice calls to every
// phone number inside an alert's area, from contacts' locations and imported
// address-point lists, with a per-tenant limit of calls in progress that
// holds across workers (Slots).
package etn

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/channelstate"
)

// New returns the ETN Sender: the voice provider of s, throttled by slots.
func New(s voice.Sender, slots *Slots) *voice.Sender {
	s.Channel = channels.Etn
	s.Throttle = slots
	return &s
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

// SlotStore keeps the slots (channelstate.CallSlots).
type SlotStore interface {
	Ensure(ctx context.Context, tenant string, limit int) error
	Take(ctx context.Context, tenant string, limit int, holder string, lease time.Duration) (bool, error)
	Release(ctx context.Context, tenant, holder string) error
	InUse(ctx context.Context, tenant string) (int, error)
}

var _ SlotStore = (*channelstate.CallSlots)(nil)

func (s *Slots) store() SlotStore { return &channelstate.CallSlots{DB: s.DB} }

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
	st := s.store()
	if err := st.Ensure(ctx, tenant, limit); err != nil {
		return err
	}
	for {
		ok, err := st.Take(ctx, tenant, limit, holder, lease)
		if err != nil {
			return err
		}
		if ok {
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
	return s.store().Release(ctx, tenant, holder)
}

// InUse counts the tenant's held slots.
func (s *Slots) InUse(ctx context.Context, tenant string) (int, error) {
	return s.store().InUse(ctx, tenant)
}
