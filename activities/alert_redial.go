package activities

import (
	"context"
	"fmt"
	"time"

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
	var err error
	if out.Redialled, err = voice.Redial(ctx, calls, a.Senders.For, ref.Tenant, &id, 200); err != nil {
		return out, err
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
