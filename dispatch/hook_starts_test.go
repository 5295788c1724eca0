package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
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
// watched: each is counted by workflow id, a start of an id that begins
// with fail (when not empty) fails without reaching Temporal, and, while
// gate is open (not nil), each start waits until together starts are in
// flight at once.
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
	gate, fail := s.gate, s.fail != "" && strings.HasPrefix(o.ID, s.fail)
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

// A claim is bounded by the deliveries its events ask for, not by their
// number: with a budget of 10, the flooding tenant's first event (6
// subscriptions) and the other tenant's (1) are claimed, and the flood's
// second, which would make 13, waits for the next claim; each later claim
// is one of the flood's events. Every delivery is started once in the end.
func TestDispatcherClaimIsBoundedByDeliveriesAndTenantsTakeTurns(t *testing.T) {
	t.Parallel()
	s := hookStack(t)
	flood, floodToken := s.NewTenant(t)
	other, otherToken := s.NewTenant(t)
	var subs []int64
	for range 6 {
		subs = append(subs, subscribe(t, s, floodToken, storage.EventAlertSent))
	}
	otherSubs := []int64{subscribe(t, s, otherToken, storage.EventAlertSent)}
	events := emitEvents(t, s, flood, storage.EventAlertSent, 4)
	otherEvents := emitEvents(t, s, other, storage.EventAlertSent, 1)

	const budget = 10
	c := watchStarts(s.Temporal, 0)
	d := &dispatch.Dispatcher{DB: s.DB, Temporal: c, TaskQueue: s.Config.TemporalTaskQueue, Batch: budget, Logger: slog.Default()}
	n, err := d.DispatchOnce(t.Context())
	first := c.seen()
	if err != nil || n != 2 || len(first) != len(subs)+1 {
		t.Fatalf("the first claim dispatched %d events with %d starts (%v), want 2 with %d: %v", n, len(first), err, len(subs)+1, first)
	}
	for _, id := range append(deliveries(subs, events[:1]), deliveries(otherSubs, otherEvents)...) {
		if first[id] != 1 {
			t.Errorf("the first claim started %s %d times, want once", id, first[id])
		}
	}
	waiting, err := storagetest.TenantEvents(t.Context(), s.DB, other)
	if err != nil || len(waiting) != 1 || !waiting[0].Dispatched {
		t.Fatalf("the other tenant's event after the first claim: %+v (%v)", waiting, err)
	}
	all := first
	for i := 1; ; i++ {
		n, err := d.DispatchOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		starts := c.seen()
		if n == 0 {
			break
		}
		if n != 1 || len(starts) != len(subs) {
			t.Fatalf("claim %d dispatched %d events with %d starts, want one of the flood's, %d", i+1, n, len(starts), len(subs))
		}
		for id, k := range starts {
			all[id] += k
		}
	}
	want := append(deliveries(subs, events), deliveries(otherSubs, otherEvents)...)
	for _, id := range want {
		if all[id] != 1 {
			t.Errorf("delivery %s started %d times, want once", id, all[id])
		}
	}
	if len(all) != len(want) {
		t.Errorf("%d deliveries started, want %d", len(all), len(want))
	}
	checkStarted(t, s, want, tenantOf(otherSubs[0], other, flood))
}

// tenantOf names the tenant of a delivery: other for those to the
// subscription otherSub, else mine.
func tenantOf(otherSub int64, other, mine string) func(id string) string {
	return func(id string) string {
		if strings.HasPrefix(id, fmt.Sprintf("hook-%d-", otherSub)) {
			return other
		}
		return mine
	}
}

// A start that fails holds back only its own event: the starts of one
// subscription fail, so the one event that matches it stays undispatched
// and waits, while the events before and after it, of its tenant and of
// another, are marked dispatched in the same claim. Once due it is
// claimed again and its deliveries are started; the one that went
// through the first time is found there.
func TestDispatcherHoldsBackOnlyTheEventWhoseStartFailed(t *testing.T) {
	t.Parallel()
	s := hookStack(t)
	tenant, token := s.NewTenant(t)
	other, otherToken := s.NewTenant(t)
	both := subscribe(t, s, token, storage.EventAlertSent, storage.EventAlertFailed)
	failing := subscribe(t, s, token, storage.EventAlertFailed)
	otherSubs := []int64{subscribe(t, s, otherToken, storage.EventAlertSent)}
	before := emitEvents(t, s, tenant, storage.EventAlertSent, 2)
	failed := emitEvents(t, s, tenant, storage.EventAlertFailed, 1)
	after := emitEvents(t, s, tenant, storage.EventAlertSent, 2)
	otherEvents := emitEvents(t, s, other, storage.EventAlertSent, 2)

	c := watchStarts(s.Temporal, 0)
	c.fail = fmt.Sprintf("hook-%d-", failing)
	d := &dispatch.Dispatcher{DB: s.DB, Temporal: c, TaskQueue: s.Config.TemporalTaskQueue, Concurrency: 4, Logger: slog.Default()}
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != 6 {
		t.Fatalf("a claim with one failing event dispatched %d events (%v), want the 6 others", n, err)
	}
	stored, err := storagetest.TenantEvents(t.Context(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range stored {
		if e.Dispatched == (e.Type == storage.EventAlertFailed) {
			t.Errorf("after a failed start: %s event dispatched %v", e.Type, e.Dispatched)
		}
	}
	done := append(deliveries([]int64{both}, append(slices.Clone(before), after...)), deliveries(otherSubs, otherEvents)...)
	calls := c.seen()
	for _, id := range done {
		if calls[id] != 1 {
			t.Errorf("delivery %s started %d times, want once", id, calls[id])
		}
	}
	// It waits: the next claim, at once, passes it over.
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != 0 {
		t.Fatalf("the failed event was claimed again at once: %d (%v)", n, err)
	}

	c.fail = ""
	if err := storagetest.MakeEventsDue(t.Context(), s.DB, tenant); err != nil {
		t.Fatal(err)
	}
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("the failed event once due: dispatched %d (%v), want 1", n, err)
	}
	calls = c.seen()
	retried := deliveries([]int64{both, failing}, failed)
	for _, id := range retried {
		if calls[id] != 1 {
			t.Errorf("delivery %s started %d times the second time, want once", id, calls[id])
		}
	}
	if len(calls) != len(retried) {
		t.Errorf("the second claim started %v, want only %v", calls, retried)
	}
	checkStarted(t, s, append(done, retried...), tenantOf(otherSubs[0], other, tenant))
}

// When Temporal refuses every start, a claim stops beginning starts once
// Concurrency of them (of two events or more) have failed: the events it
// tried wait their back-off, those it did not try stay due, and nothing
// is marked dispatched.
func TestDispatcherStopsStartingWhenEveryStartFails(t *testing.T) {
	t.Parallel()
	s := hookStack(t)
	tenant, token := s.NewTenant(t)
	sub := subscribe(t, s, token, storage.EventAlertSent)
	events := emitEvents(t, s, tenant, storage.EventAlertSent, 8)

	c := watchStarts(s.Temporal, 0)
	c.fail = "hook-"
	d := &dispatch.Dispatcher{DB: s.DB, Temporal: c, TaskQueue: s.Config.TemporalTaskQueue, Concurrency: 2, Logger: slog.Default()}
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != 0 {
		t.Fatalf("a claim whose every start failed dispatched %d (%v)", n, err)
	}
	tried := len(c.seen())
	if tried < 2 || tried >= len(events) {
		t.Fatalf("%d of %d events tried while every start failed, want at least 2 and not all", tried, len(events))
	}
	c.fail = ""
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != len(events)-tried {
		t.Fatalf("the events not tried: dispatched %d (%v), want %d", n, err, len(events)-tried)
	}
	calls := c.seen()
	if err := storagetest.MakeEventsDue(t.Context(), s.DB, tenant); err != nil {
		t.Fatal(err)
	}
	if n, err := d.DispatchOnce(t.Context()); err != nil || n != tried {
		t.Fatalf("the events tried, once due: dispatched %d (%v), want %d", n, err, tried)
	}
	for id, k := range c.seen() {
		calls[id] += k
	}
	want := deliveries([]int64{sub}, events)
	for _, id := range want {
		if calls[id] != 1 {
			t.Errorf("delivery %s started %d times once Temporal took starts, want once", id, calls[id])
		}
	}
	checkStarted(t, s, want, func(string) string { return tenant })
}
