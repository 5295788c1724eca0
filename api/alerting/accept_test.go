package alerting_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/tocsin/tocsin/channels/providers"
	"github.com/tocsin/tocsin/dispatch"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

// workflowExists tells whether Temporal knows workflow id.
func workflowExists(t *testing.T, s *stacktest.Stack, id string) bool {
	t.Helper()
	_, err := s.Temporal.DescribeWorkflowExecution(context.Background(), id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false
	}
	if err != nil {
		t.Fatalf("describe %s: %v", id, err)
	}
	return true
}

// pendingStarts reads the depth of the workflow-start outbox from the API's
// /metrics, as an operator sees it.
func pendingStarts(t *testing.T, s *stacktest.Stack) int {
	t.Helper()
	r := s.Do(t, http.MethodGet, "/metrics", "", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/metrics %d: %s", r.Status, r.Body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	f := families["tocsin_workflow_starts_pending"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("no tocsin_workflow_starts_pending in /metrics")
	}
	return int(f.GetMetric()[0].GetGauge().GetValue())
}

func TestAlertAcceptedWhileTheWorkerIsDownIsDeliveredWhenItComesBack(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.StartAPI(t, withSandbox)
	s.StartStarter(t) // the API's process starts workflows; no worker polls
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Wren", Last: "Worker", Phone: "+15550101001"}
	seed(t, s, tenant, c)

	res := send(t, s, tok, textAlert("Boil water notice.", map[string]any{"contactIds": []int64{c.ID}}))
	if res.Status != "Queued" || !strings.HasPrefix(res.WorkflowID, fmt.Sprintf("alert-%s-%d-", tenant, res.AlertID)) {
		t.Fatalf("accepted %+v", res)
	}
	stacktest.Eventually(t, 30*time.Second, "the workflow to be started", func() bool {
		return workflowExists(t, s, res.WorkflowID) && pendingStarts(t, s) == 0
	})
	time.Sleep(300 * time.Millisecond) // room for a mistaken delivery to show
	if st := status(t, s, tok, res.AlertID); st.Status != "Queued" || len(sb.SMS.Messages()) != 0 {
		t.Fatalf("progress without a worker: %+v, %d texts", st, len(sb.SMS.Messages()))
	}

	s.StartWorker(t, stacktest.WorkerOptions{})
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Deliveries.Sent+st.Deliveries.Delivered != 1 {
		t.Fatalf("after the worker came back: %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if m, err := sb.SMS.WaitTo(ctx, c.Phone); err != nil || m.Body != "Boil water notice." {
		t.Fatalf("text %+v %v", m, err)
	}
}

func TestAlertCommittedButNotStartedWhenItsProcessDiedIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	// Only the API runs: its process "dies" between commit and start.
	s := stacktest.StartAPI(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	a := &contact{First: "Ann", Last: "Never", Phone: "+15550102001"}
	b := &contact{First: "Ben", Last: "Twice", Phone: "+15550102002"}
	seed(t, s, tenant, a, b)

	never := send(t, s, tok, textAlert("Never started.", map[string]any{"contactIds": []int64{a.ID}}))
	twice := send(t, s, tok, textAlert("Started, not recorded.", map[string]any{"contactIds": []int64{b.ID}}))
	if n := pendingStarts(t, s); n != 2 {
		t.Fatalf("%d start requests, want 2", n)
	}
	if workflowExists(t, s, never.WorkflowID) || workflowExists(t, s, twice.WorkflowID) {
		t.Fatal("a workflow was started without a starter")
	}
	// A starter starts the second workflow and dies before it records
	// that (its transaction rolls back): the request stays.
	ctx := context.Background()
	err := s.DB.InTx(ctx, func(tx *sqlx.Tx) error {
		reqs, err := storage.ClaimStarts(ctx, tx, 10, false)
		if err != nil {
			return err
		}
		for _, r := range reqs {
			if r.WorkflowID == twice.WorkflowID {
				if _, err := s.Temporal.ExecuteWorkflow(ctx, dispatch.Options(r, s.Config.TemporalTaskQueue), r.WorkflowType, r.Input); err != nil {
					return err
				}
			}
		}
		return errors.New("the process died")
	})
	if err == nil || err.Error() != "the process died" {
		t.Fatalf("simulated crash: %v", err)
	}
	if n := pendingStarts(t, s); n != 2 || !workflowExists(t, s, twice.WorkflowID) {
		t.Fatalf("%d start requests after the crash, want 2", n)
	}

	// The worker comes up with its starter: both alerts are delivered,
	// each once.
	s.StartWorker(t, stacktest.WorkerOptions{})
	for _, res := range []sendResponse{never, twice} {
		if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" || st.Deliveries.Total != 1 {
			t.Fatalf("alert %d: %+v", res.AlertID, st)
		}
	}
	if n := pendingStarts(t, s); n != 0 {
		t.Fatalf("%d start requests left", n)
	}
	time.Sleep(300 * time.Millisecond) // room for a duplicate to arrive
	got := map[string]int{}
	for _, m := range sb.SMS.Messages() {
		got[m.To]++
	}
	if got[a.Phone] != 1 || got[b.Phone] != 1 {
		t.Fatalf("texts per phone %v, want one each", got)
	}
}

// firstTaskStarted is when workflow id's first workflow task started.
func firstTaskStarted(t *testing.T, s *stacktest.Stack, id string) time.Time {
	t.Helper()
	it := s.Temporal.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("history of %s: %v", id, err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED {
			return ev.GetEventTime().AsTime()
		}
	}
	t.Fatalf("%s never ran", id)
	return time.Time{}
}

// stallingWebhook is a team-chat webhook that holds every request until
// Release, counting the requests that arrived and that ended.
type stallingWebhook struct {
	*httptest.Server
	release        chan struct{}
	once           sync.Once
	started, ended atomic.Int64
}

func newStallingWebhook(t *testing.T) *stallingWebhook {
	w := &stallingWebhook{release: make(chan struct{})}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.started.Add(1)
		defer w.ended.Add(1)
		select {
		case <-w.release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { w.Release(); w.Close() })
	return w
}

// Release lets every held request, and every later one, through.
func (w *stallingWebhook) Release() { w.once.Do(func() { close(w.release) }) }

// startHeldLanes starts a stack whose lanes each have two activity slots,
// with two tenants: a busy one whose team-chat posts go to a webhook that
// holds them until released, and another; each has one contact, with the
// phone given. It returns the stack, the webhook, the tenants' tokens and
// their contacts, busy first.
func startHeldLanes(t *testing.T, busyPhone, otherPhone string) (*stacktest.Stack, *stallingWebhook, string, string, *contact, *contact) {
	t.Helper()
	hook := newStallingWebhook(t)
	_, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox, func(c *config.Config) {
		c.WorkerMaxActivities, c.WorkerUrgentActivities = 2, 2
		// The held posts must stay held while another alert is
		// delivered, however slow the machine.
		c.ProviderTimeout = 2 * time.Minute
		// The stalling webhook is a loopback server speaking plain http.
		c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true
	})
	busy, bTok := s.NewTenant(t)
	other, oTok := s.NewTenant(t)
	set := providers.Settings{Targets: []providers.Target{{Name: "ops", URL: hook.URL + "/hook", Style: "slack"}}}
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/teamChat", bTok, set); r.Status != http.StatusOK {
		t.Fatalf("configure team chat: %d %s", r.Status, r.Body)
	}
	bc := &contact{First: "Bo", Last: "Busy", Phone: busyPhone}
	seed(t, s, busy, bc)
	oc := &contact{First: "Em", Last: "Other", Phone: otherPhone}
	seed(t, s, other, oc)
	return s, hook, bTok, oTok, bc, oc
}

// An Emergency alert runs in the urgent lane: while every activity slot of
// the normal lane is held by NonEmergency deliveries that a provider does
// not answer, and more NonEmergency work waits behind them, the Emergency
// alert is delivered, before any of that work moves. With one shared pool of
// slots (priority alone orders waiting tasks, it cannot free a held slot)
// the Emergency alert would start only after a held delivery ended.
func TestEmergencyAlertIsDeliveredWhileNonEmergencyWorkHoldsEverySlot(t *testing.T) {
	t.Parallel()
	s, hook, bTok, oTok, bc, oc := startHeldLanes(t, "+15550106001", "+15550106002")

	var routine []sendResponse
	for i := range 4 {
		routine = append(routine, send(t, s, bTok, map[string]any{"settings": map[string]any{
			"message":    map[string]any{"subject": "Routine", "body": fmt.Sprintf("Routine notice %d.", i)},
			"channels":   map[string]any{"teamChat": map[string]any{"enabled": true}},
			"recipients": map[string]any{"contactIds": []int64{bc.ID}},
		}}))
	}
	// Three deliveries hold the normal lane: one the tenant's share of its
	// two local-activity slots, two its two activity slots (the
	// deliveries past the share run as activities); the fourth waits.
	stacktest.Eventually(t, 60*time.Second, "three team-chat posts to be held", func() bool { return hook.started.Load() >= 3 })

	body := textAlert("Evacuate now.", map[string]any{"contactIds": []int64{oc.ID}})
	body["settings"].(map[string]any)["priority"] = map[string]any{"priority": "Emergency"}
	emergency := send(t, s, oTok, body)
	if st := waitDone(t, s, oTok, emergency.AlertID); st.Status != "Sent" {
		t.Fatalf("Emergency alert ended %s, want Sent", st.Status)
	}
	if started, ended := hook.started.Load(), hook.ended.Load(); started != 3 || ended != 0 {
		t.Fatalf("while the Emergency alert was delivered the normal lane moved: %d posts started, %d ended; want 3 held, none ended", started, ended)
	}
	// Released, the NonEmergency work completes too.
	hook.Release()
	for _, r := range routine {
		waitDone(t, s, bTok, r.AlertID)
	}
	if n := hook.started.Load(); n != 4 {
		t.Fatalf("%d team-chat posts, want one per routine alert", n)
	}
}

// One tenant's flood of small Emergency alerts does not hold another
// tenant's Emergency alert: a single-batch alert delivers inside its
// workflow task, as a local activity, and the worker hands its
// local-activity slots out first come first served, whatever the tenant
// (Temporal's fairness orders tasks on the task queue, not local
// activities). So a tenant runs at most half of a lane's local-activity
// slots with deliveries at once; its other deliveries go to the task
// queue as activities, where tenants take turns. Here the busy tenant's
// team-chat posts are held by the provider and would take both of the
// urgent lane's two local-activity slots; the other tenant's Emergency
// alert is delivered while they are held.
func TestOneTenantsEmergencyFloodDoesNotHoldAnotherTenantsEmergencyAlert(t *testing.T) {
	t.Parallel()
	s, hook, bTok, oTok, bc, oc := startHeldLanes(t, "+15550108001", "+15550108002")

	var flood []sendResponse
	for i := range 3 {
		flood = append(flood, send(t, s, bTok, map[string]any{"settings": map[string]any{
			"message":    map[string]any{"subject": "Evacuate", "body": fmt.Sprintf("Evacuate building %d.", i)},
			"priority":   map[string]any{"priority": "Emergency"},
			"channels":   map[string]any{"teamChat": map[string]any{"enabled": true}},
			"recipients": map[string]any{"contactIds": []int64{bc.ID}},
		}}))
	}
	stacktest.Eventually(t, 60*time.Second, "two team-chat posts to be held", func() bool { return hook.started.Load() >= 2 })

	body := textAlert("Shelter in place.", map[string]any{"contactIds": []int64{oc.ID}})
	body["settings"].(map[string]any)["priority"] = map[string]any{"priority": "Emergency"}
	emergency := send(t, s, oTok, body)
	var st alertStatus
	stacktest.Eventually(t, 30*time.Second, "the other tenant's Emergency alert to complete while the busy tenant's posts are held", func() bool {
		st = status(t, s, oTok, emergency.AlertID)
		return st.Completed
	})
	if st.Status != "Sent" {
		t.Fatalf("the other tenant's Emergency alert ended %s, want Sent", st.Status)
	}
	if ended := hook.ended.Load(); ended != 0 {
		t.Fatalf("%d held posts ended before the other tenant's alert was delivered; want none", ended)
	}
	// Released, the busy tenant's alerts are delivered, each post once.
	hook.Release()
	for _, r := range flood {
		if st := waitDone(t, s, bTok, r.AlertID); st.Status != "Sent" || st.Deliveries.Final != 1 || st.Deliveries.Failed != 0 {
			t.Fatalf("busy tenant's alert %d: %+v", r.AlertID, st)
		}
	}
	if n := hook.started.Load(); n != 3 {
		t.Fatalf("%d team-chat posts, want one per alert", n)
	}
}

// A single-batch alert is one workflow task whose delivery runs inside it.
// When the worker stops while that delivery waits on the provider, another
// worker runs the task again and the alert ends with one result for its
// recipient.
func TestSingleBatchAlertWhoseWorkerStopsMidDeliveryIsDeliveredByAnother(t *testing.T) {
	t.Parallel()
	hook := newStallingWebhook(t)
	s := stacktest.StartAPI(t, func(c *config.Config) {
		c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true
	})
	tenant, tok := s.NewTenant(t)
	set := providers.Settings{Targets: []providers.Target{{Name: "ops", URL: hook.URL + "/hook", Style: "slack"}}}
	if r := s.Do(t, http.MethodPut, "/v2/settings/channels/teamChat", tok, set); r.Status != http.StatusOK {
		t.Fatalf("configure team chat: %d %s", r.Status, r.Body)
	}
	c := &contact{First: "Kit", Last: "Killed", Phone: "+15550107001"}
	seed(t, s, tenant, c)
	first := s.StartWorker(t, stacktest.WorkerOptions{})
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "A drill."},
		"channels":   map[string]any{"teamChat": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{c.ID}},
	}})
	stacktest.Eventually(t, 30*time.Second, "the post to be held", func() bool { return hook.started.Load() == 1 })
	first()
	hook.Release()
	s.StartWorker(t, stacktest.WorkerOptions{})
	st := waitDone(t, s, tok, res.AlertID)
	if st.Status != "Sent" || st.Deliveries.Total != 1 || st.Deliveries.Failed != 0 {
		t.Fatalf("after the second worker: %+v", st)
	}
	if n := hook.started.Load(); n < 2 {
		t.Fatalf("%d posts: the second worker did not deliver", n)
	}
}

func TestBackPressureRefusesNonEmergencyAlertsWithRetryAfterButAcceptsEmergency(t *testing.T) {
	t.Parallel()
	// No worker and no starter: accepted alerts stay Queued.
	s := stacktest.StartAPI(t, func(c *config.Config) {
		c.BacklogTenantLimit, c.BacklogLimit, c.BacklogRetryAfter = 2, 3, 7*time.Second
	})
	busy, busyTok := s.NewTenant(t)
	other, otherTok := s.NewTenant(t)
	cb := &contact{First: "Bo", Last: "Busy", Phone: "+15550104001"}
	seed(t, s, busy, cb)
	co := &contact{First: "Olu", Last: "Other", Phone: "+15550104002"}
	seed(t, s, other, co)
	routine := func(c *contact) map[string]any {
		return textAlert("Routine.", map[string]any{"contactIds": []int64{c.ID}})
	}
	urgent := func(c *contact) map[string]any {
		b := textAlert("Shelter in place.", map[string]any{"contactIds": []int64{c.ID}})
		b["settings"].(map[string]any)["priority"] = map[string]any{"priority": "Emergency"}
		return b
	}
	refused := func(r stacktest.Response, status int) {
		t.Helper()
		if r.Status != status || r.Header.Get("Retry-After") != "7" {
			t.Fatalf("want %d with Retry-After 7, got %d %q %s", status, r.Status, r.Header.Get("Retry-After"), r.Body)
		}
		if p := problem(t, r); p.Status != status || p.Detail == "" {
			t.Fatalf("problem %+v", p)
		}
	}

	send(t, s, busyTok, routine(cb))
	send(t, s, busyTok, routine(cb))
	// The tenant's backlog is full: its NonEmergency alerts wait, its
	// Emergency alerts do not.
	refused(s.Do(t, http.MethodPost, "/v2/alerts", busyTok, routine(cb)), http.StatusTooManyRequests)
	if r := s.Do(t, http.MethodPost, "/v2/alerts", busyTok, urgent(cb)); r.Status != http.StatusCreated {
		t.Fatalf("Emergency alert refused: %d %s", r.Status, r.Body)
	}
	// Another tenant is not held back by it until the whole backlog is full.
	send(t, s, otherTok, routine(co))
	refused(s.Do(t, http.MethodPost, "/v2/alerts", otherTok, routine(co)), http.StatusServiceUnavailable)
	if r := s.Do(t, http.MethodPost, "/v2/alerts", otherTok, urgent(co)); r.Status != http.StatusCreated {
		t.Fatalf("Emergency alert refused: %d %s", r.Status, r.Body)
	}
	if n := alertCount(t, s, busyTok) + alertCount(t, s, otherTok); n != 5 {
		t.Fatalf("%d alerts stored, want the 5 accepted", n)
	}
}

// With fairness per tenant, a tenant's alert queued behind another
// tenant's flood of the same priority is among the first handed out.
func TestOneTenantsFloodDoesNotMakeAnotherTenantWait(t *testing.T) {
	t.Parallel()
	_, withSandbox := stacktest.Sandbox(t)
	s := stacktest.StartAPI(t, withSandbox)
	s.StartStarter(t)
	flooder, fTok := s.NewTenant(t)
	quiet, qTok := s.NewTenant(t)
	fc := &contact{First: "Flo", Last: "Flood", Phone: "+15550105001"}
	seed(t, s, flooder, fc)
	qc := &contact{First: "Quin", Last: "Quiet", Phone: "+15550105002"}
	seed(t, s, quiet, qc)

	type queued struct {
		tok string
		res sendResponse
	}
	var all []queued
	for i := range 8 {
		all = append(all, queued{fTok, send(t, s, fTok, textAlert(fmt.Sprintf("Routine %d.", i), map[string]any{"contactIds": []int64{fc.ID}}))})
	}
	late := send(t, s, qTok, textAlert("Routine too.", map[string]any{"contactIds": []int64{qc.ID}}))
	all = append(all, queued{qTok, late})
	stacktest.Eventually(t, 30*time.Second, "every workflow to be started", func() bool {
		for _, q := range all {
			if !workflowExists(t, s, q.res.WorkflowID) {
				return false
			}
		}
		return pendingStarts(t, s) == 0
	})

	s.StartWorker(t, stacktest.WorkerOptions{OneWorkflowTaskAtATime: true})
	for _, q := range all {
		waitDone(t, s, q.tok, q.res.AlertID)
	}
	type run struct {
		id string
		at time.Time
	}
	var runs []run
	for _, q := range all {
		runs = append(runs, run{q.res.WorkflowID, firstTaskStarted(t, s, q.res.WorkflowID)})
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].at.Before(runs[j].at) })
	pos := slices.IndexFunc(runs, func(r run) bool { return r.id == late.WorkflowID })
	if pos > 1 {
		t.Fatalf("the quiet tenant's alert ran %d of %d, want among the first two", pos+1, len(runs))
	}
}
