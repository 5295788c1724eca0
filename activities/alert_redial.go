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
	// Ringing counts calls dialled within voice.RingWindow whose outcome
	// has not come back yet: a busy or unanswered one may still ask for a
	// redial.
	Ringing int
	// NextDue is the earliest time a waiting call is due (zero: none waits).
	NextDue time.Time
}

// RedialCalls dials again the alert's busy or unanswered calls whose retry
// time has come (voice and ETN, each through its channel's Sender) and
// reports what is still pending. It does nothing for an alert whose id is
// another alert's now.
func (a *Activities) RedialCalls(ctx context.Context, ref AlertRef) (RedialOutcome, error) {
	var out RedialOutcome
	if err := a.checkAlert(ctx, ref); err != nil {
		return out, err
	}
	calls := &voice.Calls{DB: a.DB}
	id := ref.AlertID
	var err error
	if out.Redialled, err = voice.Redial(ctx, calls, a.Senders.For, ref.Tenant, &id, 200); err != nil {
		return out, err
	}
	if out.Pending, err = calls.Pending(ctx, ref.Tenant, &id); err != nil {
		return out, err
	}
	o, err := calls.Outlook(ctx, ref.Tenant, ref.AlertID, voice.RingWindow)
	if err != nil {
		return out, fmt.Errorf("next redial: %w", err)
	}
	out.Ringing = o.Ringing
	if o.NextDue != nil {
		out.NextDue = *o.NextDue
	}
	return out, nil
}
