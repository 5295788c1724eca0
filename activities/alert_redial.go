package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/voice"
)

// RedialOutcome says what is left of an alert's calls.
type RedialOutcome struct {
	Redialled int
	// Pending counts calls not final yet (in progress or waiting to redial).
	Pending int
	// NextDue is the earliest time a waiting call is due (zero: none waits).
	NextDue time.Time
}

// RedialCalls dials again the alert's busy or unanswered calls whose retry
// time has come (voice and ETN, each through its channel's Sender) and
// reports what is still pending.
func (a *Activities) RedialCalls(ctx context.Context, ref AlertRef) (RedialOutcome, error) {
	var out RedialOutcome
	calls := &voice.Calls{DB: a.DB}
	id := ref.AlertID
	msgs, err := calls.ClaimDue(ctx, ref.Tenant, &id, 200)
	if err != nil {
		return out, err
	}
	by := map[channels.Channel][]channels.Message{}
	for _, m := range msgs {
		by[m.Channel] = append(by[m.Channel], m)
	}
	for ch, ms := range by {
		snd, err := a.Senders.For(ch)
		var res []channels.Result
		if err == nil {
			res, err = snd.Send(ctx, ms)
		}
		for i, m := range ms {
			reason := ""
			switch {
			case err != nil:
				reason = err.Error()
			case i < len(res) && res[i].Outcome == channels.Failed:
				reason = res[i].Error
			}
			if reason == "" {
				out.Redialled++
				continue
			}
			if ferr := calls.Fail(ctx, ref.Tenant, m.Key, reason); ferr != nil {
				return out, ferr
			}
		}
	}
	if out.Pending, err = calls.Pending(ctx, ref.Tenant, &id); err != nil {
		return out, err
	}
	next, err := calls.NextRetry(ctx, ref.Tenant, ref.AlertID)
	if err != nil {
		return out, fmt.Errorf("next redial: %w", err)
	}
	if next != nil {
		out.NextDue = *next
	}
	return out, nil
}
