package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/internal/stacktest"
)

func TestGeoTargetingPicksExactlyTheContactsInside(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	// A square around downtown with a hole; contacts inside, inside the
	// hole, just outside, and far away; one without a location.
	in1 := &contact{First: "In", Last: "One", Phone: "+15550000001", Lat: 41.85, Lng: -87.65, HasLocation: true}
	in2 := &contact{First: "In", Last: "Two", Phone: "+15550000002", Lat: 41.81, Lng: -87.69, HasLocation: true}
	hole := &contact{First: "In", Last: "Hole", Phone: "+15550000003", Lat: 41.875, Lng: -87.625, HasLocation: true}
	edge := &contact{First: "Just", Last: "Outside", Phone: "+15550000004", Lat: 41.85, Lng: -87.599, HasLocation: true}
	far := &contact{First: "Far", Last: "Away", Phone: "+15550000005", Lat: 40.71, Lng: -74.0, HasLocation: true}
	none := &contact{First: "No", Last: "Where", Phone: "+15550000006"}
	near := &contact{First: "Near", Last: "Point", Phone: "+15550000007", Lat: 40.7130, Lng: -74.0065, HasLocation: true}
	seed(t, s, tenant, in1, in2, hole, edge, far, none, near)
	other := stacktest.NewTenant()
	otherIn := &contact{First: "Other", Last: "Tenant", Phone: "+15550000008", Lat: 41.85, Lng: -87.65, HasLocation: true}
	seed(t, s, other, otherIn)

	areas := []map[string]any{
		{"name": "downtown", "geometry": map[string]any{"type": "FeatureCollection", "features": []map[string]any{{
			"type": "Feature",
			"geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{
				{{-87.7, 41.8}, {-87.6, 41.8}, {-87.6, 41.9}, {-87.7, 41.9}, {-87.7, 41.8}},
				{{-87.63, 41.87}, {-87.62, 41.87}, {-87.62, 41.88}, {-87.63, 41.88}, {-87.63, 41.87}},
			}},
		}}}},
		// 1 km around a point in New York: far is ~50 m and near ~600 m away.
		{"name": "circle", "center": map[string]any{"lat": 40.7128, "lng": -74.0060}, "radiusMeters": 1000},
	}
	body := textAlert("Flood warning for your area.", map[string]any{"areas": areas})

	// The preview counts them without storing anything.
	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, body)
	var pv struct {
		ID         int64
		Recipients struct {
			Total      int64
			PerChannel []struct {
				Channel string
				Count   int64
			}
		}
		Messages []struct {
			Channel, Body, Encoding string
			Segments                int
		}
	}
	r.JSON(t, &pv)
	if r.Status != 200 || pv.ID != 0 || pv.Recipients.Total != 4 || pv.Messages[0].Segments != 1 || pv.Messages[0].Encoding != "GSM-7" {
		t.Fatalf("preview %d %s", r.Status, r.Body)
	}
	if alertCount(t, s, tok) != 0 {
		t.Fatal("the preview stored an alert")
	}

	res := send(t, s, tok, body)
	st := waitDone(t, s, tok, res.AlertID)
	if st.Recipients != 4 {
		t.Fatalf("status %+v", st)
	}
	var got []string
	for _, m := range sb.SMS.Messages() {
		got = append(got, m.To)
	}
	sort.Strings(got)
	want := []string{in1.Phone, in2.Phone, far.Phone, near.Phone}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("texts went to %v, want %v", got, want)
	}
}

func TestPollAnswerThroughTheLinkShowsInResults(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	a := &contact{First: "Ann", Last: "A", Phone: "+15551110001"}
	b := &contact{First: "Bob", Last: "B", Phone: "+15551110002"}
	seed(t, s, tenant, a, b)
	res := send(t, s, tok, pollAlert("Are you safe, {{firstName}}?", a, b))
	msg, link := responseLink(t, s, sb, a.Phone)
	if !strings.HasPrefix(msg, "Are you safe, Ann?") {
		t.Fatalf("text %q", msg)
	}
	// Bob's link is another one.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	short := regexp.MustCompile(`/s/[0-9A-Za-z]{8}`).FindString(msg)
	bobMsg, err := sb.SMS.WaitTo(ctx, b.Phone)
	if err != nil || strings.Contains(bobMsg.Body, short) {
		t.Fatalf("Bob's text %q (%v) carries Ann's link", bobMsg.Body, err)
	}
	// The page lists the options; answering option 2 records it.
	r := s.Do(t, http.MethodGet, link, "", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), "I need help") || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page %d %s", r.Status, r.Body)
	}
	// A personal page: not sniffed, framed, cached or leaked in a Referer.
	for name, want := range map[string]string{
		"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("page header %s = %q, want %q", name, got, want)
		}
	}
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("page CSP %q", csp)
	}
	r = s.Do(t, http.MethodPost, link+"?optionId=2", "", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"optionText":"I need help"`) {
		t.Fatalf("answer %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPost, link+"?optionId=9", "", nil); r.Status != 400 {
		t.Fatalf("unknown option: %d", r.Status)
	}
	if r := s.Do(t, http.MethodPost, link[:len(link)-3]+"abc?optionId=1", "", nil); r.Status != 404 {
		t.Fatalf("forged token: %d", r.Status)
	}
	waitDone(t, s, tok, res.AlertID)
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results", res.AlertID), tok, nil)
	var results struct {
		Responded int64
		Poll      struct {
			Questions []struct {
				Responded, NotResponded int64
				Results                 struct {
					Options []struct {
						OptionID int
						Count    int64
					}
				}
			}
			Severity struct{ Highest string }
		}
	}
	r.JSON(t, &results)
	q := results.Poll.Questions
	if results.Responded != 1 || len(q) != 1 || q[0].Responded != 1 || q[0].NotResponded != 1 ||
		q[0].Results.Options[1].Count != 1 || q[0].Results.Options[0].Count != 0 || results.Poll.Severity.Highest != "High" {
		t.Fatalf("results %s", r.Body)
	}
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?pollOptionId=2", res.AlertID), tok, nil)
	var page struct {
		TotalCount int64
		Items      []struct {
			Name      struct{ First string }
			Confirmed bool
			Responses []struct{ OptionID int }
		}
	}
	r.JSON(t, &page)
	if page.TotalCount != 1 || page.Items[0].Name.First != "Ann" || !page.Items[0].Confirmed || page.Items[0].Responses[0].OptionID != 2 {
		t.Fatalf("recipients who chose option 2: %s", r.Body)
	}
	if n := strings.Count(strings.Join(events(t, s, tenant), ","), "alert.recipient.responded"); n != 1 {
		t.Fatalf("%d responded events", n)
	}
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// responseLink waits for the text to phone and returns its body and the
// path of the personal response page its short link redirects to.
func responseLink(t *testing.T, s *stacktest.Stack, sb *sandbox.Sandbox, phone string) (text, page string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msg, err := sb.SMS.WaitTo(ctx, phone)
	if err != nil {
		t.Fatal(err)
	}
	short := regexp.MustCompile(`/s/[0-9A-Za-z]{8}`).FindString(msg.Body)
	if short == "" {
		t.Fatalf("no short response link in %q", msg.Body)
	}
	res, err := noRedirect.Get(s.URL + short)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	target, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(target.Path, "/v2/public/alerts/responses/") {
		t.Fatalf("short link answered %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	return msg.Body, target.Path
}

// browserPost posts to path as a browser's form does, without following
// the redirect.
func browserPost(t *testing.T, s *stacktest.Stack, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	res, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func TestBrowserConfirmsThroughThePageUntilTheAlertCloses(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Cy", Last: "C", Phone: "+15551110003"}
	seed(t, s, tenant, c)
	body := textAlert("Confirm, please: {{responseLink}}", map[string]any{"contactIds": []int64{c.ID}})
	body["settings"].(map[string]any)["workflow"] = map[string]any{"confirmationRequested": true, "broadcastDurationMinutes": 1}
	res := send(t, s, tok, body)
	_, link := responseLink(t, s, sb, c.Phone)

	// A browser's confirmation is recorded and sent back to the page.
	r, b := browserPost(t, s, link+"?confirm=true")
	var answer struct {
		AlertID   int64
		Confirmed bool
	}
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != link+"?done=true" ||
		json.Unmarshal(b, &answer) != nil || !answer.Confirmed || answer.AlertID != res.AlertID {
		t.Fatalf("browser confirmation: %d to %q, body %s", r.StatusCode, r.Header.Get("Location"), b)
	}
	page := s.Do(t, http.MethodGet, link+"?done=true", "", nil)
	if p := string(page.Body); !strings.Contains(p, "Thank you") || !strings.Contains(p, "<form") || !strings.Contains(p, ">Confirmed</button>") {
		t.Fatalf("page after confirming: %s", p)
	}

	// Once the broadcast duration has passed and the alert completed, the
	// page has no buttons and answers are refused.
	stacktest.Eventually(t, 150*time.Second, "the alert to close", func() bool {
		return status(t, s, tok, res.AlertID).Completed
	})
	page = s.Do(t, http.MethodGet, link, "", nil)
	if p := string(page.Body); page.Status != 200 || strings.Contains(p, "<form") || !strings.Contains(p, "This alert is closed") || !strings.Contains(p, "Confirmed.") {
		t.Fatalf("page of a closed alert: %d %s", page.Status, p)
	}
	if r := s.Do(t, http.MethodPost, link+"?confirm=true", "", nil); r.Status != http.StatusGone || problem(t, r).Status != http.StatusGone {
		t.Fatalf("answer to a closed alert: %d %s", r.Status, r.Body)
	}
	r, b = browserPost(t, s, link+"?confirm=true")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != link+"?done=true" || json.Unmarshal(b, &answer) != nil || !answer.Confirmed {
		t.Fatalf("browser answer to a closed alert: %d to %q, body %s", r.StatusCode, r.Header.Get("Location"), b)
	}
	if n := strings.Count(strings.Join(events(t, s, tenant), ","), "alert.recipient.responded"); n != 1 {
		t.Fatalf("%d responded events, want 1", n)
	}
}

func TestScheduledAlertWaitsForItsTime(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "Sam", Last: "S", Phone: "+15552220001"}
	seed(t, s, tenant, c)
	later := textAlert("Drill tomorrow.", map[string]any{"contactIds": []int64{c.ID}})
	later["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	far := send(t, s, tok, later)
	soon := textAlert("Drill now.", map[string]any{"contactIds": []int64{c.ID}})
	// Far enough ahead that the request is answered before its time, however
	// loaded the machine.
	sendAt := time.Now().Add(10 * time.Second).UTC()
	soon["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": sendAt.Format(time.RFC3339Nano)}
	near := send(t, s, tok, soon)
	if far.Status != "Scheduled" || near.Status != "Scheduled" {
		t.Fatalf("statuses %s %s", far.Status, near.Status)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msg, err := sb.SMS.WaitFor(ctx, func(m sandbox.Text) bool { return m.Body == "Drill now." })
	if err != nil {
		t.Fatal(err)
	}
	if msg.ReceivedAt.Before(sendAt) {
		t.Fatalf("sent at %s, before its time %s", msg.ReceivedAt, sendAt)
	}
	st := waitDone(t, s, tok, near.AlertID)
	if st.Status != "Sent" || st.History[0].Status != "Scheduled" || st.History[1].Status != "Queued" {
		t.Fatalf("near alert %+v", st)
	}
	if st := status(t, s, tok, far.AlertID); st.Status != "Scheduled" || st.Recipients != 0 {
		t.Fatalf("far alert %+v", st)
	}
	for _, m := range sb.SMS.Messages() {
		if m.Body == "Drill tomorrow." {
			t.Fatal("the alert scheduled in an hour was sent")
		}
	}
	// Its workflow is waiting on a timer.
	desc, err := s.Temporal.DescribeWorkflowExecution(context.Background(), far.WorkflowID, "")
	if err != nil || desc.WorkflowExecutionInfo.GetStatus().String() != "Running" {
		t.Fatalf("workflow %v %v", desc, err)
	}
	_ = s.Temporal.TerminateWorkflow(context.Background(), far.WorkflowID, "", "test over")
}

func TestIdempotentRetryReturnsTheFirstAlert(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "I", Last: "D", Email: "id@example.com"}
	seed(t, s, tenant, c)
	body := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Once", "body": "Only once."},
		"recipients": map[string]any{"contactIds": []int64{c.ID}},
	}}
	r1 := s.Do(t, http.MethodPost, "/v2/alerts", tok, body, "Idempotency-Key", "key-1")
	r2 := s.Do(t, http.MethodPost, "/v2/alerts", tok, body, "Idempotency-Key", "key-1")
	r3 := s.Do(t, http.MethodPost, "/v2/alerts", tok, body, "Idempotency-Key", "key-2")
	var a1, a2, a3 sendResponse
	r1.JSON(t, &a1)
	r2.JSON(t, &a2)
	r3.JSON(t, &a3)
	if r1.Status != 201 || r2.Status != 200 || r3.Status != 201 || a1.AlertID != a2.AlertID || a3.AlertID == a1.AlertID ||
		!a2.Replayed || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("%d %s / %d %s / %d %s", r1.Status, r1.Body, r2.Status, r2.Body, r3.Status, r3.Body)
	}
	// Concurrent retries with one key create one alert.
	body["jobId"] = "job-race"
	done := make(chan int64, 5)
	for range 5 {
		go func() {
			r := s.Do(t, http.MethodPost, "/v2/alerts", tok, body)
			var a sendResponse
			r.JSON(t, &a)
			done <- a.AlertID
		}()
	}
	first := <-done
	for range 4 {
		if id := <-done; id != first {
			t.Fatalf("concurrent retries created alerts %d and %d", first, id)
		}
	}
	if n := alertCount(t, s, tok); n != 3 {
		t.Fatalf("%d alerts, want 3", n)
	}
	// Another tenant may use the same key.
	other := stacktest.NewTenant()
	oc := &contact{First: "O", Last: "T", Email: "ot@example.com"}
	seed(t, s, other, oc)
	body["settings"].(map[string]any)["recipients"] = map[string]any{"contactIds": []int64{oc.ID}}
	delete(body, "jobId")
	if r := s.Do(t, http.MethodPost, "/v2/alerts", s.Token(t, other), body, "Idempotency-Key", "key-1"); r.Status != 201 {
		t.Fatalf("other tenant: %d %s", r.Status, r.Body)
	}
}

func TestRecipientSourcesListsDirectoryFilterAndRelated(t *testing.T) {
	t.Parallel()
	_, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	listed := &contact{First: "Lis", Last: "Ted", Email: "listed@example.com", Custom: `{"building":"B12"}`}
	listed2 := &contact{First: "Lis", Last: "Two", Email: "listed2@example.com", Custom: `{"building":"A1"}`}
	dirUser := &contact{First: "Dir", Last: "User", Email: "dir@example.com", Custom: `{"building":"B12"}`, Directory: "main"}
	dirOther := &contact{First: "Dir", Last: "Other", Email: "dir2@example.com", Directory: "main"}
	seed(t, s, tenant, listed, listed2, dirUser, dirOther)
	listID := list(t, s, tenant, "l", listed, listed2)
	emailAlert := func(recipients map[string]any) map[string]any {
		return map[string]any{"settings": map[string]any{
			"message": map[string]any{"subject": "S", "body": "B"}, "recipients": recipients,
			"channels": map[string]any{"email": map[string]any{"enabled": true}},
		}}
	}
	recipientsOf := func(id int64) []string {
		t.Helper()
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?sort=lastName&pageSize=50", id), tok, nil)
		var page struct {
			Items []struct {
				Email       string
				IsMandatory bool `json:"isMandatory"`
			}
		}
		r.JSON(t, &page)
		var out []string
		for _, it := range page.Items {
			out = append(out, fmt.Sprintf("%s:%v", it.Email, it.IsMandatory))
		}
		return out
	}
	a1 := send(t, s, tok, emailAlert(map[string]any{
		"distributionListIds": []int64{listID},
		"directory":           map[string]any{"directoryId": "main", "userIds": []string{fmt.Sprint(dirUser.ID)}},
	}))
	waitDone(t, s, tok, a1.AlertID)
	if got := fmt.Sprint(recipientsOf(a1.AlertID)); got != "[listed@example.com:false listed2@example.com:false dir@example.com:true]" {
		t.Fatalf("list and directory user: %s", got)
	}
	// The access filter keeps building B12; the related alert's recipients join.
	a2 := send(t, s, tok, emailAlert(map[string]any{
		"directory":    map[string]any{"directoryId": "main", "allUsers": true},
		"accessFilter": map[string]any{"conditions": []map[string]any{{"field": "custom.building", "operator": "Equals", "values": []string{"B12"}}}},
	}))
	waitDone(t, s, tok, a2.AlertID)
	if got := fmt.Sprint(recipientsOf(a2.AlertID)); got != "[dir@example.com:false]" {
		t.Fatalf("filtered directory: %s", got)
	}
	followUp := emailAlert(map[string]any{"contactIds": []int64{dirOther.ID}})
	followUp["settings"].(map[string]any)["related"] = map[string]any{"alertId": a1.AlertID, "relation": "FollowUp",
		"actions": map[string]any{"includeOriginalRecipients": true}}
	a3 := send(t, s, tok, followUp)
	waitDone(t, s, tok, a3.AlertID)
	// The first alert's recipients keep their standing: Dir User was selected directly.
	if got := fmt.Sprint(recipientsOf(a3.AlertID)); got != "[dir2@example.com:true listed@example.com:false listed2@example.com:false dir@example.com:true]" {
		t.Fatalf("follow-up: %s", got)
	}
	// Unknown directory users are refused.
	r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, emailAlert(map[string]any{
		"directory": map[string]any{"directoryId": "main", "userIds": []string{fmt.Sprint(listed.ID)}},
	}))
	if r.Status != 400 || !strings.Contains(string(r.Body), "settings.recipients.directory.userIds") {
		t.Fatalf("a contact that is no user of the directory: %d %s", r.Status, r.Body)
	}
}

// TestSortsPutMissingValuesLast: an alert not sent yet comes after the sent
// ones sorted by sentAt, and a recipient who has not responded after those
// who have sorted by responseTime, ascending and descending alike.
func TestSortsPutMissingValuesLast(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	a := &contact{First: "Ann", Last: "A", Phone: "+15551110011"}
	b := &contact{First: "Ben", Last: "B", Phone: "+15551110012"}
	c := &contact{First: "Cat", Last: "C", Phone: "+15551110013"}
	seed(t, s, tenant, a, b, c)
	body := textAlert("Confirm, please: {{responseLink}}", map[string]any{"contactIds": []int64{a.ID, b.ID, c.ID}})
	body["settings"].(map[string]any)["workflow"] = map[string]any{"confirmationRequested": true}
	sent := send(t, s, tok, body)
	later := textAlert("Drill tomorrow.", map[string]any{"contactIds": []int64{a.ID}})
	later["settings"].(map[string]any)["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	scheduled := send(t, s, tok, later)
	t.Cleanup(func() { _ = s.Temporal.TerminateWorkflow(context.Background(), scheduled.WorkflowID, "", "test over") })

	// Ann and Cat confirm, Ben does not.
	for _, p := range []*contact{a, c} {
		_, link := responseLink(t, s, sb, p.Phone)
		if r := s.Do(t, http.MethodPost, link+"?confirm=true", "", nil); r.Status != http.StatusOK {
			t.Fatalf("confirm: %d %s", r.Status, r.Body)
		}
	}
	for sort, want := range map[string]string{"responseTime": "Ann Cat Ben", "-responseTime": "Cat Ann Ben"} {
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/results/recipients?sort=%s", sent.AlertID, sort), tok, nil)
		var page struct {
			Items []struct{ Name struct{ First string } }
		}
		r.JSON(t, &page)
		var got []string
		for _, it := range page.Items {
			got = append(got, it.Name.First)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("sort=%s: %v, want %s: %s", sort, got, want, r.Body)
		}
	}

	if st := waitDone(t, s, tok, sent.AlertID); st.Status != "Sent" {
		t.Fatalf("alert %+v", st)
	}
	for _, sort := range []string{"sentAt", "-sentAt"} {
		r := s.Do(t, http.MethodPost, "/v2/alerts/find?sort="+sort, tok, map[string]any{})
		var page struct {
			Items []struct{ ID int64 }
		}
		r.JSON(t, &page)
		if len(page.Items) != 2 || page.Items[0].ID != sent.AlertID || page.Items[1].ID != scheduled.AlertID {
			t.Errorf("sort=%s: %s", sort, r.Body)
		}
	}
}
