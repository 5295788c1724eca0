package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels/social"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestSenderReachesEveryProvider: what an alert says about its sender
// reaches each provider through the API, the worker and the providers'
// protocols: its emails are from the sender's name at the platform's
// address (a name with quotes, commas, angle brackets and "Bcc:" adds no
// address and no header), with the Reply-To of the email block or else
// the sender's; its texts and calls ask for the sender's caller id (ETN
// for its block's own); its posts end with the link and the hashtags. An
// alert that says nothing keeps the platform's sender and no Reply-To.
func TestSenderReachesEveryProvider(t *testing.T) {
	t.Parallel()
	sb, withSandbox := stacktest.Sandbox(t)
	s := startWithPublicURL(t, withSandbox, func(c *config.Config) { c.SMTPFrom = "County Alerts <alerts@county.example>" })
	tenant, tok := s.NewTenant(t)
	l := configureLoopbacks(t, s, tok, nil)
	ada := &apiPerson{First: "Ada", Phone: "+12025550111", Email: "ada-" + tenant + "@example.com"}
	directoryUser(t, s, tenant, tok, ada, nil)

	hostile := `Campus "Safety", Ops <evil@attacker.example> Bcc: victim@example.com — Zoë`
	link := "https://county.example/storm"
	settings := map[string]any{
		"message":     map[string]any{"subject": "Storm", "body": "Take shelter now. " + strings.Repeat("Stay indoors. ", 30)},
		"sender":      map[string]any{"name": hostile, "replyTo": "Safety@Example.COM", "callerId": "+15550100"},
		"content":     map[string]any{"link": link},
		"socialMedia": map[string]any{"hashtags": []string{"storm", "#CountyOEM"}, "includeLink": true},
		"channels": map[string]any{
			"email":       map[string]any{"enabled": true},
			"text":        map[string]any{"enabled": true},
			"voice":       map[string]any{"enabled": true},
			"etn":         map[string]any{"enabled": true, "callerId": "+15550199"},
			"socialPostA": map[string]any{"enabled": true},
			"socialPostB": map[string]any{"enabled": true},
		},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}
	res := send(t, s, tok, map[string]any{"settings": settings})
	if st := waitDone(t, s, tok, res.AlertID); st.Status != "Sent" {
		t.Fatalf("alert %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	m, err := sb.SMTP.WaitTo(ctx, ada.Email)
	if err != nil {
		t.Fatal(err)
	}
	if m.FromName != hostile || m.HeaderFrom != "alerts@county.example" || len(m.Headers["From"]) != 1 {
		t.Errorf("From %q <%s> (%q), want the sender's name at the platform's address", m.FromName, m.HeaderFrom, m.Headers["From"])
	}
	if strings.Join(m.ReplyTo, ",") != "safety@example.com" {
		t.Errorf("Reply-To %v, want the sender's", m.ReplyTo)
	}
	if len(m.To) != 1 || m.Headers["Bcc"] != nil || len(sb.SMTP.Messages()) != 1 {
		t.Errorf("the name reached someone else: to %v, headers %v, %d emails", m.To, m.Headers, len(sb.SMTP.Messages()))
	}
	if txt, err := sb.SMS.WaitTo(ctx, ada.Phone); err != nil || txt.From != "+15550100" {
		t.Errorf("text %+v %v, want it from the sender's caller id", txt, err)
	}
	calls := l.voice.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want a voice and an ETN call", len(calls))
	}
	for _, c := range calls {
		want := "+15550100"
		if strings.Contains(c.IdempotencyKey, ":etn:") {
			want = "+15550199"
		}
		if c.Request.From != want {
			t.Errorf("call %s from %q, want %q", c.IdempotencyKey, c.Request.From, want)
		}
	}
	posts := l.social.Posts()
	if len(posts) != 2 {
		t.Fatalf("%d posts", len(posts))
	}
	for _, p := range posts {
		tail := " #storm #CountyOEM"
		if p.Network == social.NetworkA {
			tail = " " + link + tail
		} else if p.Link != link {
			t.Errorf("network B post without its link: %+v", p)
		}
		if !strings.HasPrefix(p.Text, "Storm: Take shelter now. Stay indoors.") || !strings.HasSuffix(p.Text, tail) {
			t.Errorf("network %s post %q, want it to end with %q", p.Network, p.Text, tail)
		}
	}
	// The preview shows each post as the network got it.
	shown := shownMessages(t, s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, map[string]any{"settings": settings}))
	for _, p := range posts {
		if got := shown["socialPost"+p.Network]; got != "|"+p.Text {
			t.Errorf("preview of network %s shows %q, the network got %q", p.Network, got, p.Text)
		}
	}
	l.checkProblems(t)

	// An alert that only posts counts its posts as its status does: in the
	// Sent transition and in its events.
	posted := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Roads", "body": "Roads are closed."},
		"channels":   map[string]any{"socialPostA": map[string]any{"enabled": true}, "socialPostB": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}})
	st := waitDone(t, s, tok, posted.AlertID)
	if st.Status != "Sent" || st.Deliveries.Sent+st.Deliveries.Delivered != 2 {
		t.Fatalf("posting alert %+v", st)
	}
	for _, h := range st.History {
		if h.Status == "Sent" && h.Detail != "2 sent, 0 failed" {
			t.Errorf("the Sent transition says %q, the status 2 sent", h.Detail)
		}
	}
	recorded, err := storagetest.TenantEvents(ctx, s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	counted := 0
	for _, e := range recorded {
		var ev struct {
			AlertID   int64 `json:"alertId"`
			Sent      int64 `json:"sent"`
			Delivered int64 `json:"delivered"`
		}
		if json.Unmarshal(e.Payload, &ev) != nil || ev.AlertID != posted.AlertID || (e.Type != "alert.sent" && e.Type != "alert.completed") {
			continue
		}
		counted++
		if ev.Sent+ev.Delivered != 2 {
			t.Errorf("%s counts %d sent and %d delivered, the status 2", e.Type, ev.Sent, ev.Delivered)
		}
	}
	if counted != 2 {
		t.Errorf("%d alert.sent and alert.completed events of the posting alert, want 2", counted)
	}

	// The email block's Reply-To wins over the sender's; without a sender
	// name, the platform's sender stands.
	sb.SMTP.Clear()
	res = send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "A drill."},
		"sender":     map[string]any{"replyTo": "safety@example.com"},
		"channels":   map[string]any{"email": map[string]any{"enabled": true, "replyTo": "desk@example.com"}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}})
	waitDone(t, s, tok, res.AlertID)
	if m, err := sb.SMTP.WaitTo(ctx, ada.Email); err != nil || m.FromName != "County Alerts" || m.HeaderFrom != "alerts@county.example" ||
		strings.Join(m.ReplyTo, ",") != "desk@example.com" {
		t.Errorf("email %+v %v, want the platform's sender and the block's Reply-To", m, err)
	}
	sb.SMTP.Clear()
	res = send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "A drill."},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"contactIds": []int64{ada.ID}},
	}})
	waitDone(t, s, tok, res.AlertID)
	if m, err := sb.SMTP.WaitTo(ctx, ada.Email); err != nil || m.FromName != "County Alerts" || m.ReplyTo != nil {
		t.Errorf("email %+v %v, want the platform's sender and no Reply-To", m, err)
	}
}

// TestAlertDetailsShowTheSocialBlocksOwnPost: an alert's details show each
// social post as the network gets it also with replaceMessageVariables
// false: the block's own message, after the subject, with the link and
// hashtags, as the filled-in details show it.
func TestAlertDetailsShowTheSocialBlocksOwnPost(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	_, tok := s.NewTenant(t)
	configureLoopbacks(t, s, tok, nil)
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message":     map[string]any{"subject": "Storm", "body": "Take shelter now."},
		"content":     map[string]any{"link": "https://county.example/storm"},
		"socialMedia": map[string]any{"hashtags": []string{"storm"}, "includeLink": true},
		"channels": map[string]any{
			"email":       map[string]any{"enabled": true},
			"socialPostA": map[string]any{"enabled": true, "message": "Shelters are open at every school."},
		},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "drill@example.com"}}},
	}})
	post := func(replace bool) string {
		shown := shownMessages(t, s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d?replaceMessageVariables=%v", res.AlertID, replace), tok, nil))
		got, ok := shown["socialPostA"]
		if !ok {
			t.Fatalf("no socialPostA message in %v", shown)
		}
		return got
	}
	const want = "|Storm: Shelters are open at every school. https://county.example/storm #storm"
	for _, replace := range []bool{true, false} {
		if got := post(replace); got != want {
			t.Errorf("with replaceMessageVariables %v the post shows %q, want %q", replace, got, want)
		}
	}
}

// TestAlertDetailsLeaveVariablesAsWritten: asked not to fill the
// variables, an alert's details show each channel's message as its block
// says it (a push block's title and body, a team-chat block's message, a
// text block's body), with the variables as written, as the renderer makes
// it for delivery.
func TestAlertDetailsLeaveVariablesAsWritten(t *testing.T) {
	t.Parallel()
	s := startWithPublicURL(t)
	_, tok := s.NewTenant(t)
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Storm", "body": "Take shelter, {{firstName}}."},
		"channels": map[string]any{
			"text":     map[string]any{"enabled": true, "body": "SHELTER NOW {{firstName}}"},
			"push":     map[string]any{"enabled": true, "title": "Storm warning", "body": "Shelter, {{firstName}}."},
			"teamChat": map[string]any{"enabled": true, "message": "Storm: staff to the shelters."},
		},
		"recipients": map[string]any{"adHoc": []map[string]any{{"firstName": "Ada", "phone": "+14155550177"}}},
	}})
	shown := shownMessages(t, s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d?replaceMessageVariables=false", res.AlertID), tok, nil))
	for ch, want := range map[string]string{
		"text":     "|SHELTER NOW {{firstName}}",
		"push":     "Storm warning|Shelter, {{firstName}}.",
		"teamChat": "Storm|Storm: staff to the shelters.",
	} {
		if shown[ch] != want {
			t.Errorf("%s shows %q, want %q", ch, shown[ch], want)
		}
	}
}

// shownMessages are the messages an alert's details or preview answer r
// shows, as "subject|body" by channel.
func shownMessages(t *testing.T, r stacktest.Response) map[string]string {
	t.Helper()
	var got struct {
		Messages []struct{ Channel, Subject, Body string }
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil {
		t.Fatalf("messages: %d %s", r.Status, r.Body)
	}
	shown := map[string]string{}
	for _, m := range got.Messages {
		shown[m.Channel] = m.Subject + "|" + m.Body
	}
	return shown
}
