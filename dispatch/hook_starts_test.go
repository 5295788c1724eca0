package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// startsClient is the stack's Temporal client with its workflow starts
// watched: each is counted by workflow id, a start of the id in fail
// fails without reaching Temporal, and, while gate is open (not nil),
// each start waits until together starts are in flight at once.
type startsClient struct {
	client.Client
	together int

	mu       sync.Mutex
	calls    map[string]int
	options  map[string]client.StartWorkflowOptions
	fail     string
	inFlight int
	most     int
	gate     chan struct{}
	open     bool
}

func watchStarts(c client.Client, together int) *startsClient {
	s := &startsClient{Client: c, together: together, calls: map[string]int{}, options: map[string]client.StartWorkflowOptions{}}
	if together > 1 {
		s.gate = make(chan struct{})
	}
	return s
}

func (s *startsClient) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error) {
	s.mu.Lock()
	s.calls[o.ID]++
	s.options[o.ID] = o
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	if s.gate != nil && !s.open && s.inFlight == s.together {
		close(s.gate)
		s.open = true
	}
	gate, fail := s.gate, s.fail == o.ID
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, fmt.Errorf("waited for %d starts in flight together: %w", s.together, ctx.Err())
		}
	}
	if fail {
		return nil, errors.New("temporal unavailable")
	}
	return s.Client.ExecuteWorkflow(ctx, o, workflow, args...)
}

// seen returns the starts counted since the last call, by workflow id,
// and forgets them.
func (s *startsClient) seen() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = map[string]int{}
	return c
}

// hookStack is a stack's API with no worker: events wait in the outbox
// for the test's dispatcher, and the deliveries it starts for a worker.
func hookStack(t *testing.T) *stacktest.Stack {
	return stacktest.StartAPI(t, func(c *config.Config) {
		c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true
	})
}

// subscribe creates a subscription of the tenant (token) to types through
// the API and returns its id.
func subscribe(t *testing.T, s *stacktest.Stack, token string, types ...string) int64 {
	t.Helper()
	r := s.Do(t, http.MethodPost, "/v2/settings/subscriptions", token, map[string]any{"url": "http://127.0.0.1:9/hook", "eventTypes": types})
	if r.Status != http.StatusCreated {
		t.Fatalf("create subscription: %d %s", r.Status, r.Body)
	}
	var sub struct{ ID int64 }
	r.JSON(t, &sub)
	return sub.ID
}

// emitEvents records n events of typ for tenant and returns their ids.
func emitEvents(t *testing.T, s *stacktest.Stack, tenant, typ string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id, err := storage.EmitEvent(t.Context(), s.DB, tenant, typ, map[string]int{"n": i})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// deliveries are the workflow ids of the deliveries of events to subs.
func deliveries(subs []int64, events []string) []string {
	var ids []string
	for _, sub := range subs {
		for _, e := range events {
			ids = append(ids, fmt.Sprintf("hook-%d-%s", sub, e))
		}
	}
	return ids
}

// checkStarted checks that Temporal has each delivery of ids, on the
// stack's task queue (the normal lane) with the tenant of its event as
// its fairness key (tenantOf), and terminates it when the test ends: no
// worker will run it.
func checkStarted(t *testing.T, s *stacktest.Stack, ids []string, tenantOf func(id string) string) {
	t.Helper()
	for _, id := range ids {
		t.Cleanup(func() { _ = s.Temporal.TerminateWorkflow(context.Background(), id, "", "test over") })
		d, err := s.Temporal.DescribeWorkflowExecution(t.Context(), id, "")
		if err != nil {
			t.Errorf("delivery %s: %v", id, err)
			continue
		}
		info := d.GetWorkflowExecutionInfo()
		if info.GetTaskQueue() != s.Config.TemporalTaskQueue || info.GetPriority().GetFairnessKey() != tenantOf(id) {
			t.Errorf("delivery %s on %s with fairness key %q, want %s and %q", id, info.GetTaskQueue(), info.GetPriority().GetFairnessKey(),
				s.Config.TemporalTaskQueue, tenantOf(id))
		}
	}
}

// A batch's deliveries are started together, at most Concurrency at once,
// each once: every matching subscription of the event's tenant, under its
// business id, on the normal lane with the tenant as its fairness key.
func TestDispatcherStartsABatchsDeliveriesTogetherEachOnce(t *testing.T) {
	t.Parallel()
	s := hookStack(t)
	tenant, token := s.NewTenant(t)
	other, otherToken := s.NewTenant(t)
	subs := []int64{subscribe(t, s, token, storage.EventAlertSent), subscribe(t, s, token, storage.EventAlertSent, storage.EventAlertFailed),
		subscribe(t, s, token, storage.EventAlertSent)}
	subscribe(t, s, token, storage.EventFileUploaded)
	otherSubs := []int64{subscribe(t, s, otherToken, storage.EventAlertSent)}
	events := emitEvents(t, s, tenant, storage.EventAlertSent, 5)
	otherEvents := emitEvents(t, s, other, storage.EventAlertSent, 2)
	emitEvents(t, s, tenant, storage.EventAlertCreated, 1)

	const limit = 4
	c := watchStarts(s.Temporal, limit)
	d := &dispatch.Dispatcher{DB: s.DB, Temporal: c, TaskQueue: s.Config.TemporalTaskQueue, Concurrency: limit, Logger: slog.Default()}
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != 8 {
		t.Fatalf("dispatched %d events (%v), want 8", n, err)
	}
	want := append(deliveries(subs, events), deliveries(otherSubs, otherEvents)...)
	calls := c.seen()
	for _, id := range want {
		if calls[id] != 1 {
			t.Errorf("delivery %s started %d times, want once", id, calls[id])
		}
	}
	if len(calls) != len(want) {
		t.Errorf("%d deliveries started, want %d: %v", len(calls), len(want), calls)
	}
	if c.most != limit {
		t.Errorf("%d starts in flight at most, want %d", c.most, limit)
	}
	checkStarted(t, s, want, func(id string) string {
		if slices.ContainsFunc(otherEvents, func(e string) bool { return id == fmt.Sprintf("hook-%d-%s", otherSubs[0], e) }) {
			return other
		}
		return tenant
	})
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != 0 {
		t.Fatalf("dispatched %d events again (%v)", n, err)
	}
}

// A start that fails in the middle of a batch leaves every event of the
// batch undispatched; the next dispatch starts each delivery again, and
// those that the failed one started are found there.
func TestDispatcherLeavesTheBatchWhenAStartFails(t *testing.T) {
	t.Parallel()
	s := hookStack(t)
	tenant, token := s.NewTenant(t)
	subs := []int64{subscribe(t, s, token, storage.EventAlertSent), subscribe(t, s, token, storage.EventAlertSent)}
	events := emitEvents(t, s, tenant, storage.EventAlertSent, 6)

	c := watchStarts(s.Temporal, 0)
	c.fail = fmt.Sprintf("hook-%d-%s", subs[1], events[2])
	d := &dispatch.Dispatcher{DB: s.DB, Temporal: c, TaskQueue: s.Config.TemporalTaskQueue, Concurrency: 4, Logger: slog.Default()}
	if n, err := d.DispatchOnce(t.Context()); err == nil || n != 0 {
		t.Fatalf("a failed start dispatched %d events (%v)", n, err)
	}
	stored, err := storagetest.TenantEvents(t.Context(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(events) || slices.ContainsFunc(stored, func(e storagetest.RecordedEvent) bool { return e.Dispatched }) {
		t.Fatalf("events after a failed start %+v, want %d none dispatched", stored, len(events))
	}
	want := deliveries(subs, events)
	startedBefore := 0
	for _, id := range want {
		if _, err := s.Temporal.DescribeWorkflowExecution(t.Context(), id, ""); err == nil {
			startedBefore++
		}
	}
	if startedBefore == 0 {
		t.Fatal("no delivery of the failed batch was started: the next dispatch finds none there")
	}

	c.seen()
	c.fail = ""
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != len(events) {
		t.Fatalf("the batch again: dispatched %d events (%v), want %d", n, err, len(events))
	}
	calls := c.seen()
	for _, id := range want {
		if calls[id] != 1 {
			t.Errorf("delivery %s started %d times the second time, want once", id, calls[id])
		}
	}
	checkStarted(t, s, want, func(string) string { return tenant })
}
