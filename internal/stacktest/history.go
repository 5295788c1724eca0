package stacktest

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
)

// History returns the events of a workflow's current run, none while the
// workflow does not exist (an outbox starts it shortly after the request).
func (s *Stack) History(t testing.TB, workflowID string) []*historypb.HistoryEvent {
	t.Helper()
	var events []*historypb.HistoryEvent
	for it := s.Temporal.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT); it.HasNext(); {
		ev, err := it.Next()
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return nil
		}
		if err != nil {
			t.Fatalf("history of %s: %v", workflowID, err)
		}
		events = append(events, ev)
	}
	return events
}

// CheckWorkflowTasks fails the test for every workflow task in events that
// took longer than limit, from its start to its end.
func CheckWorkflowTasks(t testing.TB, events []*historypb.HistoryEvent, limit time.Duration) {
	t.Helper()
	var started time.Time
	for _, ev := range events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			started = ev.GetEventTime().AsTime()
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			if d := ev.GetEventTime().AsTime().Sub(started); d > limit {
				t.Errorf("workflow task of event %d took %s", ev.GetEventId(), d)
			}
		}
	}
}
