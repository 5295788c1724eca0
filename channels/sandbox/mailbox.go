package sandbox

import (
	"context"
	"sync"
)

// mailbox keeps received items and wakes waiters when one arrives.
type mailbox[T any] struct {
	mu      sync.Mutex
	items   []T
	arrived chan struct{} // closed and replaced on every arrival
}

func newMailbox[T any]() mailbox[T] {
	return mailbox[T]{arrived: make(chan struct{})}
}

func (b *mailbox[T]) add(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items = append(b.items, v)
	close(b.arrived)
	b.arrived = make(chan struct{})
}

func (b *mailbox[T]) all() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]T(nil), b.items...)
}

func (b *mailbox[T]) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.items = nil
}

func (b *mailbox[T]) waitFor(ctx context.Context, match func(T) bool) (T, error) {
	for {
		b.mu.Lock()
		for _, v := range b.items {
			if match(v) {
				b.mu.Unlock()
				return v, nil
			}
		}
		wake := b.arrived
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
	}
}
