package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/tocsin/tocsin/activities"
)

// redialRun runs SendAlert for a one-cycle alert of recipients on channel
// ch whose RedialCalls answers outcome(round, now) (rounds from 1), and
// returns how many rounds ran and the batches delivered.
func redialRun(t *testing.T, ch string, recipients int64, outcome func(round int, now time.Time) activities.RedialOutcome) (int, []string) {
	t.Helper()
	log := &batchLog{}
	env := newEnv(func(activities.AlertRef) (activities.AlertPlan, error) {
		return activities.AlertPlan{Channels: []string{ch}, Recipients: recipients, BatchSize: 10, Cycles: 1, Parallelism: 2, MaxAttempts: 3}, nil
	}, log, true)
	var a *activities.Activities
	rounds := 0
	env.OnActivity(a.RedialCalls, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.AlertRef) (activities.RedialOutcome, error) {
			rounds++
			return outcome(rounds, env.Now()), nil
		})
	env.ExecuteWorkflow(SendAlert, SendAlertInput{Tenant: "1001", AlertID: 7})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	return rounds, log.keys()
}

// TestSendAlertRedialsUntilNoCallWaits: with a voice channel, the workflow
// redials when calls are due (sleeping until then) and finishes the cycle
// once none waits.
func TestSendAlertRedialsUntilNoCallWaits(t *testing.T) {
	t.Parallel()
	rounds, got := redialRun(t, "voice", 3, func(round int, now time.Time) activities.RedialOutcome {
		if round < 3 {
			return activities.RedialOutcome{Pending: 1, NextDue: now.Add(5 * time.Minute)}
		}
		return activities.RedialOutcome{}
	})
	if rounds != 3 {
		t.Fatalf("%d redial rounds, want 3", rounds)
	}
	if len(got) != 1 || got[0] != "voice:1:0-3" {
		t.Fatalf("batches %v", got)
	}
}

func TestSendCapUpdate(t *testing.T) {
	t.Parallel()
	log := &batchLog{}
	env := newEnv(nil, log, false)
	var a *activities.Activities
	var got activities.CapUpdateInput
	env.OnActivity(a.DeliverCapUpdate, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CapUpdateInput) (activities.CapUpdateOutcome, error) {
			got = in
			return activities.CapUpdateOutcome{Sent: []string{"eas"}}, nil
		})
	in := activities.CapUpdateInput{AlertRef: activities.AlertRef{Tenant: "1001", AlertID: 7}, MsgType: "Cancel", Seq: 2}
	env.ExecuteWorkflow(SendCapUpdate, in)
	var out activities.CapUpdateOutcome
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if got != in || len(out.Sent) != 1 {
		t.Fatalf("activity got %+v, workflow returned %+v", got, out)
	}
	if id := CapUpdateWorkflowID("alert-1001-7-abcdefgh", 2); id != "alert-1001-7-abcdefgh-cap-2" {
		t.Fatalf("workflow id %s", id)
	}
}

// TestSendAlertWaitsForRingingCalls: a call whose outcome has not come back
// may still turn out busy and ask for a redial, so the workflow keeps
// looking while calls ring, and redials the one that asked.
func TestSendAlertWaitsForRingingCalls(t *testing.T) {
	t.Parallel()
	rounds, _ := redialRun(t, "voice", 1, func(round int, now time.Time) activities.RedialOutcome {
		switch round {
		case 1, 2:
			return activities.RedialOutcome{Pending: 1, Ringing: 1}
		case 3:
			// The busy callback came: a redial is due.
			return activities.RedialOutcome{Pending: 1, NextDue: now.Add(30 * time.Second)}
		case 4:
			return activities.RedialOutcome{Redialled: 1, Pending: 1, Ringing: 1}
		}
		return activities.RedialOutcome{}
	})
	if rounds != 5 {
		t.Fatalf("%d redial rounds, want 5", rounds)
	}
}

// TestSendAlertStopsLookingAtCallsThatNeverEnd: calls that ring on (their
// outcome never comes back within the activity's ring window) are looked
// at maxRingPolls times, not for ever, and the cycle ends.
func TestSendAlertStopsLookingAtCallsThatNeverEnd(t *testing.T) {
	t.Parallel()
	rounds, _ := redialRun(t, "etn", 1, func(int, time.Time) activities.RedialOutcome {
		return activities.RedialOutcome{Pending: 1, Ringing: 1}
	})
	if rounds != maxRingPolls {
		t.Fatalf("%d looks at ringing calls, want %d", rounds, maxRingPolls)
	}
}

// TestRingingPollsLeaveTheRedialsTheirRounds: looking at ringing calls
// does not count against the redial rounds, so calls due for a redial
// after many looks are still redialled.
func TestRingingPollsLeaveTheRedialsTheirRounds(t *testing.T) {
	t.Parallel()
	rounds, _ := redialRun(t, "voice", 1, func(round int, now time.Time) activities.RedialOutcome {
		switch {
		case round <= 60:
			// One call rings, another waits an hour for its redial.
			return activities.RedialOutcome{Pending: 2, Ringing: 1, NextDue: now.Add(time.Hour)}
		case round <= 120:
			// Then calls are redialled, one due after another.
			return activities.RedialOutcome{Redialled: 1, Pending: 1, NextDue: now.Add(time.Minute)}
		}
		return activities.RedialOutcome{}
	})
	if rounds != 121 {
		t.Fatalf("%d rounds, want 60 looks and 60 redials, then the end", rounds)
	}
}
