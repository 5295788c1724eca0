package dispatch

import (
	"context"
	"sync"
	"time"
)

// lane is one queue of an outbox that a poll carries out.
type lane struct {
	// once claims and carries out one batch and answers whether another
	// should follow at once: the batch was full, so more may wait.
	once func(ctx context.Context) (more bool, err error)
	// warn reports a batch that failed.
	warn func(err error)
}

// poll carries out an outbox's lanes until ctx ends. It kicks every lane
// at once, then each time wake or notified receives (either may be nil),
// and at the latest interval after the last kick. A kicked lane claims
// batch after batch until one says no more may wait, or fails; lanes do not
// wait for one another.
func poll(ctx context.Context, interval time.Duration, wake, notified <-chan struct{}, lanes ...lane) {
	kicks := make([]chan struct{}, len(lanes))
	var wg sync.WaitGroup
	for i, l := range lanes {
		kicks[i] = make(chan struct{}, 1)
		wg.Go(func() { l.drain(ctx, kicks[i]) })
	}
	defer wg.Wait()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		case <-notified:
		}
		for _, k := range kicks {
			nudge(k)
		}
		t.Reset(interval)
	}
}

// nudge sends on c unless it already holds a signal (c has room for one):
// a receiver that has not yet taken the pending signal will act on both.
func nudge(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// drain carries out batch after batch each time kick receives, until ctx
// ends.
func (l lane) drain(ctx context.Context, kick <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		for ctx.Err() == nil {
			more, err := l.once(ctx)
			if err != nil {
				if ctx.Err() == nil {
					l.warn(err)
				}
				break
			}
			if !more {
				break
			}
		}
	}
}

// batchSize is the most rows an outbox claims at once: n, or 100 when n is
// not set.
func batchSize(n int) int {
	if n <= 0 {
		return 100
	}
	return n
}

// concurrency is the most starts an outbox has in flight at once: n, or
// 16 when n is not set.
func concurrency(n int) int {
	if n <= 0 {
		return 16
	}
	return n
}
