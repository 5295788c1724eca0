package dispatch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// queue is a lane's outbox for the test: rows waiting, batches claimed.
type queue struct {
	mu       sync.Mutex
	rows     int
	batches  int
	failures int
	fail     bool
}

func (q *queue) add(n int) { q.mu.Lock(); q.rows += n; q.mu.Unlock() }

func (q *queue) once(batch int) func(context.Context) (bool, error) {
	return func(context.Context) (bool, error) {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.fail {
			q.fail = false
			return false, errors.New("claim failed")
		}
		n := min(q.rows, batch)
		q.rows -= n
		q.batches++
		return n == batch, nil
	}
}

func (q *queue) state() (rows, batches, failures int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rows, q.batches, q.failures
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPollDrainsEachLaneWhenKicked(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var a, b queue
	a.add(25) // three full batches of 10, then a short one
	wake := make(chan struct{}, 1)
	lanes := []lane{}
	for _, q := range []*queue{&a, &b} {
		lanes = append(lanes, lane{once: q.once(10), warn: func(error) {
			q.mu.Lock()
			q.failures++
			q.mu.Unlock()
		}})
	}
	done := make(chan struct{})
	go func() { poll(ctx, time.Hour, wake, nil, lanes...); close(done) }()

	// The first kick drains a: full batches, then the short one.
	waitFor(t, "lane a drained", func() bool { rows, batches, _ := a.state(); return rows == 0 && batches == 3 })
	waitFor(t, "lane b polled", func() bool { _, batches, _ := b.state(); return batches == 1 })

	// With an hour's interval only a wake-up reaches the lanes again; a
	// failed batch is reported and ends that drain.
	b.add(5)
	b.mu.Lock()
	b.fail = true
	b.mu.Unlock()
	wake <- struct{}{}
	waitFor(t, "b's failure reported", func() bool { _, _, failures := b.state(); return failures == 1 })
	if rows, _, _ := b.state(); rows != 5 {
		t.Fatalf("b has %d rows after a failed batch, want 5", rows)
	}
	wake <- struct{}{}
	waitFor(t, "b drained", func() bool { rows, _, _ := b.state(); return rows == 0 })
	// a was kicked by both wake-ups too: one empty batch each.
	waitFor(t, "a polled on each wake-up", func() bool { _, batches, _ := a.state(); return batches == 5 })

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("poll did not return when ctx ended")
	}
}

func TestPollKicksEveryInterval(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var q queue
	go poll(ctx, 10*time.Millisecond, nil, nil, lane{once: q.once(10), warn: func(error) {}})
	waitFor(t, "first batch", func() bool { _, batches, _ := q.state(); return batches >= 1 })
	q.add(3)
	waitFor(t, "rows added later claimed by the interval's poll", func() bool { rows, _, _ := q.state(); return rows == 0 })
}
