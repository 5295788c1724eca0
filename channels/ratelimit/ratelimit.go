// Package ratelimit holds a channel's deliveries to a rate with a token
// bucket (golang.org/x/time/rate), one message per token.
package ratelimit

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/time/rate"

	"github.com/tocsin/tocsin/channels"
)

// Sender passes messages to Next no faster than Limiter allows. Batches are
// cut into pieces of at most the limiter's burst, each waiting for its tokens.
type Sender struct {
	Next    channels.Sender
	Limiter *rate.Limiter
}

// Limiters hands out one token bucket per key (a tenant's channel), shared
// by every Sender wrapped under that key, so the worker lanes of a process
// that each build their own Senders still hold a tenant to one rate. A
// bucket whose rate or burst changed is replaced. The zero value is ready;
// a nil *Limiters gives every Sender a bucket of its own.
type Limiters struct {
	mu sync.Mutex
	m  map[string]*rate.Limiter
}

// Wrap returns next limited to perSecond messages with the given burst by
// the bucket of key; next alone when perSecond is not positive.
func (l *Limiters) Wrap(key string, next channels.Sender, perSecond float64, burst int) channels.Sender {
	if perSecond <= 0 {
		return next
	}
	if burst < 1 {
		burst = max(1, int(perSecond))
	}
	return &Sender{Next: next, Limiter: l.get(key, rate.Limit(perSecond), burst)}
}

func (l *Limiters) get(key string, r rate.Limit, burst int) *rate.Limiter {
	if l == nil {
		return rate.NewLimiter(r, burst)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.m[key]; ok && b.Limit() == r && b.Burst() == burst {
		return b
	}
	if l.m == nil {
		l.m = map[string]*rate.Limiter{}
	}
	b := rate.NewLimiter(r, burst)
	l.m[key] = b
	return b
}

// Send implements channels.Sender.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	out := make([]channels.Result, 0, len(msgs))
	burst := max(1, s.Limiter.Burst())
	for start := 0; start < len(msgs); start += burst {
		piece := msgs[start:min(len(msgs), start+burst)]
		if err := s.Limiter.WaitN(ctx, len(piece)); err != nil {
			if len(out) == 0 {
				return nil, fmt.Errorf("rate limit: %w", err)
			}
			// What was sent stays sent; the rest is a temporary failure.
			for _, m := range msgs[start:] {
				out = append(out, channels.Result{Key: m.Key, Outcome: channels.Failed, Error: "rate limit wait: " + err.Error()})
			}
			return out, nil
		}
		res, err := s.Next.Send(ctx, piece)
		if err != nil {
			if len(out) == 0 {
				return nil, err
			}
			for _, m := range piece {
				out = append(out, channels.Result{Key: m.Key, Outcome: channels.Failed, Error: err.Error()})
			}
			continue
		}
		out = append(out, res...)
	}
	return out, nil
}
