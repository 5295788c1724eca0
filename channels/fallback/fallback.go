// Package fallback sends through a second provider what the first one could
// not deliver: the whole batch when the first is unreachable, and each
// message the first refused permanently or could not be reached for
// (connection refused or reset, no answer).
package fallback

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/channels"
)

// Sender tries Primary first and Secondary for what Primary failed.
type Sender struct {
	Primary, Secondary channels.Sender
	// OnFallback, when set, is told how many messages went to Secondary.
	OnFallback func(n int)
}

// New returns primary alone when secondary is nil, else a fallback Sender.
func New(primary, secondary channels.Sender) channels.Sender {
	if secondary == nil {
		return primary
	}
	return &Sender{Primary: primary, Secondary: secondary}
}

// Send implements channels.Sender.
func (s *Sender) Send(ctx context.Context, msgs []channels.Message) ([]channels.Result, error) {
	res, err := s.Primary.Send(ctx, msgs)
	if err != nil {
		// The primary provider could not be reached at all.
		s.told(len(msgs))
		res2, err2 := s.Secondary.Send(ctx, msgs)
		if err2 != nil {
			return nil, fmt.Errorf("primary provider: %v; fallback provider: %w", err, err2)
		}
		return res2, nil
	}
	if len(res) != len(msgs) {
		return nil, fmt.Errorf("primary provider returned %d results for %d messages", len(res), len(msgs))
	}
	var retry []channels.Message
	var at []int
	for i, r := range res {
		if r.Outcome == channels.Failed && (r.Permanent || r.Unreachable) {
			retry = append(retry, msgs[i])
			at = append(at, i)
		}
	}
	if len(retry) == 0 {
		return res, nil
	}
	s.told(len(retry))
	res2, err := s.Secondary.Send(ctx, retry)
	if err != nil || len(res2) != len(retry) {
		// Keep the primary's answers: they say why each message failed.
		return res, nil
	}
	for j, i := range at {
		res[i] = res2[j]
	}
	return res, nil
}

func (s *Sender) told(n int) {
	if s.OnFallback != nil {
		s.OnFallback(n)
	}
}
