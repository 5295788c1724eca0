package alerting_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
)

func TestBadInputIsA4xxNamingTheField(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "V", Last: "V", Email: "v@example.com", Phone: "+15553330001"}
	seed(t, s, tenant, c)
	other := stacktest.NewTenant()
	oc := &contact{First: "O", Last: "O", Email: "o@example.com"}
	seed(t, s, other, oc)
	otherGroup := group(t, s, other, 0, oc)
	uploadFile(t, s, tenant, tok, "brand", "logo.png", "image/png", pngImage(t))

	recipients := map[string]any{"contactIds": []int64{c.ID}}
	with := func(mut func(settings map[string]any)) map[string]any {
		b := textAlert("Hello {{firstName}}", recipients)
		mut(b["settings"].(map[string]any))
		return b
	}
	badPolygon := map[string]any{"geometry": map[string]any{"type": "FeatureCollection", "features": []map[string]any{{
		"type": "Feature", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{0, 0}, {1, 0}, {1, 1}, {0, 1}}}},
	}}}}
	// Read on a plane, this 2° square across longitude 180 is a band round the world.
	acrossTheAntimeridian := map[string]any{"geometry": map[string]any{"type": "FeatureCollection", "features": []map[string]any{{
		"type": "Feature", "geometry": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{179, 39}, {-179, 39}, {-179, 41}, {179, 41}, {179, 39}}}},
	}}}}
	cases := []struct {
		name  string
		body  map[string]any
		field string
		msg   string
	}{
		{"unknown group", with(func(s map[string]any) {
			s["recipients"] = map[string]any{"groups": []map[string]any{{"id": 999999999}}}
		}), "body.settings.recipients.groups", "unknown groups"},
		{"another tenant's group", with(func(s map[string]any) {
			s["recipients"] = map[string]any{"groups": []map[string]any{{"id": otherGroup}}}
		}), "body.settings.recipients.groups", "unknown groups"},
		{"another tenant's contact", with(func(s map[string]any) {
			s["recipients"] = map[string]any{"contactIds": []int64{oc.ID}}
		}), "body.settings.recipients.contactIds", "unknown contacts"},
		{"empty recipients", with(func(s map[string]any) { s["recipients"] = map[string]any{} }), "body.settings.recipients", "no recipients"},
		{"bad polygon", with(func(s map[string]any) {
			s["recipients"] = map[string]any{"areas": []any{badPolygon}}
		}), "body.settings.recipients.areas[0]", "not closed"},
		{"polygon across the antimeridian", with(func(s map[string]any) {
			s["recipients"] = map[string]any{"areas": []any{acrossTheAntimeridian}}
		}), "body.settings.recipients.areas[0]", "must not cross the antimeridian"},
		{"unknown channel", with(func(s map[string]any) {
			s["channels"] = map[string]any{"pager": map[string]any{"enabled": true}}
		}), "body.settings.channels", "pager"},
		{"no channel enabled", with(func(s map[string]any) {
			s["channels"] = map[string]any{"text": map[string]any{"enabled": false}}
		}), "body.settings.channels", "no channel"},
		{"oversize text", with(func(s map[string]any) {
			s["message"] = map[string]any{"subject": "x", "body": strings.Repeat("a", 1600)}
		}), "body.settings.message.body", "segments"},
		{"oversize text for its limit", with(func(s map[string]any) {
			s["channels"] = map[string]any{"text": map[string]any{"enabled": true, "maxSegments": 1, "body": strings.Repeat("a", 161)}}
		}), "body.settings.channels.text.body", "limit of 1"},
		{"oversize subject", with(func(s map[string]any) {
			s["message"] = map[string]any{"subject": strings.Repeat("s", 201), "body": "b"}
		}), "body.settings.message.subject", ""},
		{"unknown variable", with(func(s map[string]any) {
			s["message"] = map[string]any{"subject": "x", "body": "Hi {{nickname}}"}
		}), "body.settings.message.body", "unknown variable"},
		{"unclosed variable", with(func(s map[string]any) {
			s["message"] = map[string]any{"subject": "x {{firstName", "body": "b"}
		}), "body.settings.message.subject", "unclosed"},
		{"poll without questions", with(func(s map[string]any) { s["type"] = "Poll" }), "body.settings.survey", "questions"},
		{"later without time", with(func(s map[string]any) { s["schedule"] = map[string]any{"type": "Later"} }), "body.settings.schedule.sendAt", "sendAt"},
		{"later in the past", with(func(s map[string]any) {
			s["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().Add(-time.Hour).Format(time.RFC3339)}
		}), "body.settings.schedule.sendAt", "future"},
		{"now with a time", with(func(s map[string]any) {
			s["schedule"] = map[string]any{"type": "Now", "sendAt": time.Now().Add(time.Hour).Format(time.RFC3339)}
		}), "body.settings.schedule.sendAt", "Later"},
		{"bad phone", with(func(s map[string]any) {
			s["recipients"] = map[string]any{"adHoc": []map[string]any{{"phone": "555"}}}
		}), "body.settings.recipients.adHoc[0].phone", ""},
		{"unknown related alert", with(func(s map[string]any) { s["related"] = map[string]any{"alertId": 987654321, "relation": "Update"} }),
			"body.settings.related.alertId", "unknown alerts"},
		{"missing file", with(func(s map[string]any) { s["content"] = map[string]any{"attachments": []string{"nope.pdf"}} }),
			"body.settings.content.attachments[0]", "no stored file"},
		{"a file attached twice", with(func(s map[string]any) {
			s["content"] = map[string]any{"attachments": []string{"brand/logo.png", "brand/logo.png"}}
		}), "body.settings.content.attachments[1]", "attached already (content.attachments[0])"},
		{"a question id twice", with(func(s map[string]any) {
			s["type"] = "Poll"
			s["survey"] = map[string]any{"questions": []map[string]any{
				{"id": 1, "text": "q", "options": []map[string]any{{"text": "a"}, {"text": "b"}}},
				{"id": 1, "text": "q2", "options": []map[string]any{{"text": "c"}, {"text": "d"}}},
			}}
		}), "body.settings.survey.questions[1].id", "question id 1 is used twice"},
		{"an option id twice", with(func(s map[string]any) {
			s["type"] = "Poll"
			s["survey"] = map[string]any{"questions": []map[string]any{
				{"text": "q", "options": []map[string]any{{"id": 7, "text": "a"}, {"text": "b"}}},
				{"text": "q2", "options": []map[string]any{{"text": "c"}, {"id": 7, "text": "d"}}},
			}}
		}), "body.settings.survey.questions[1].options[1].id", "option id 7 is used twice"},
		{"a line break in the sender's name", with(func(s map[string]any) {
			s["sender"] = map[string]any{"name": "Campus\nBcc: victim@example.com"}
		}), "body.settings.sender.name", "control character"},
		{"a sender's name that displays reversed", with(func(s map[string]any) {
			s["sender"] = map[string]any{"name": "Campus Safety\u202e"}
		}), "body.settings.sender.name", "bidirectional control"},
		{"an invisible character in the sender's name", with(func(s map[string]any) {
			s["sender"] = map[string]any{"name": "Campus\u200bSafety"}
		}), "body.settings.sender.name", "invisible"},
		{"a Reply-To with a display name", with(func(s map[string]any) {
			s["sender"] = map[string]any{"replyTo": "Safety <safety@example.com>"}
		}), "body.settings.sender.replyTo", "alone"},
		{"two Reply-To addresses", with(func(s map[string]any) {
			s["channels"] = map[string]any{"email": map[string]any{"enabled": true, "replyTo": "a@example.com, b@example.com"}}
		}), "body.settings.channels.email.replyTo", ""},
		{"an email block's Reply-To with a comment", with(func(s map[string]any) {
			s["channels"] = map[string]any{"email": map[string]any{"enabled": true, "replyTo": "desk@example.com (Desk)"}}
		}), "body.settings.channels.email.replyTo", "alone"},
		{"a caller id that is no E.164 number", with(func(s map[string]any) { s["sender"] = map[string]any{"callerId": "555-0100"} }),
			"body.settings.sender.callerId", ""},
		{"a voice caller id that is no E.164 number", with(func(s map[string]any) {
			s["channels"] = map[string]any{"voice": map[string]any{"enabled": true, "callerId": "+1 555 0100"}}
		}), "body.settings.channels.voice.callerId", ""},
		{"an ETN caller id that is a name", with(func(s map[string]any) {
			s["channels"] = map[string]any{"etn": map[string]any{"enabled": true, "callerId": "CountyOEM"}}
		}), "body.settings.channels.etn.callerId", ""},
		{"a hashtag with a space", with(func(s map[string]any) {
			s["socialMedia"] = map[string]any{"hashtags": []string{"storm", "snow day"}}
		}), "body.settings.socialMedia.hashtags[1]", "cannot be in a hashtag"},
		{"a hashtag of digits", with(func(s map[string]any) { s["socialMedia"] = map[string]any{"hashtags": []string{"#2026"}} }),
			"body.settings.socialMedia.hashtags[0]", "digits alone"},
		{"a hashtag twice", with(func(s map[string]any) {
			s["socialMedia"] = map[string]any{"hashtags": []string{"#Storm", "storm"}}
		}), "body.settings.socialMedia.hashtags[1]", "socialMedia.hashtags[0]"},
		{"a link that fills network A's posts", with(func(s map[string]any) {
			s["content"] = map[string]any{"link": "https://county.example/" + strings.Repeat("a", 130)}
			s["channels"] = map[string]any{"socialPostA": map[string]any{"enabled": true, "includeLink": true}}
		}), "body.settings.content.link", "leave room for the text"},
		{"hashtags that fill network A's posts", with(func(s map[string]any) {
			s["socialMedia"] = map[string]any{"hashtags": []string{strings.Repeat("a", 50), strings.Repeat("b", 50), strings.Repeat("c", 50)}}
			s["channels"] = map[string]any{"socialPostA": map[string]any{"enabled": true}}
		}), "body.settings.socialMedia.hashtags", "leave room for the text"},
		{"later past a year", with(func(s map[string]any) {
			s["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().AddDate(1, 0, 0).Add(time.Hour).Format(time.RFC3339)}
		}), "body.settings.schedule.sendAt", "at most a year ahead"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, path := range []string{"/v2/alerts", "/v2/alerts/preview"} {
				r := s.Do(t, http.MethodPost, path, tok, c.body)
				if r.Status != http.StatusBadRequest {
					t.Fatalf("%s: status %d: %s", path, r.Status, r.Body)
				}
				p := problem(t, r)
				found := false
				for _, f := range p.Errors {
					if strings.HasPrefix(f.Location, c.field) && strings.Contains(f.ErrorMessage+fmt.Sprint(f.AttemptedValue)+f.Location, c.msg) {
						found = true
					}
				}
				if !found {
					t.Fatalf("%s: no failure at %s mentioning %q: %s", path, c.field, c.msg, r.Body)
				}
			}
		})
	}
	if n := alertCount(t, s, tok); n != 0 {
		t.Fatalf("refused alerts left %d alerts", n)
	}
	// Up to a calendar year ahead is accepted; once each, the file and ids are.
	for name, body := range map[string]map[string]any{
		"later within a year": with(func(s map[string]any) {
			s["schedule"] = map[string]any{"type": "Later", "sendAt": time.Now().AddDate(1, 0, 0).Add(-time.Hour).Format(time.RFC3339)}
		}),
		"a file attached once": with(func(s map[string]any) { s["content"] = map[string]any{"attachments": []string{"brand/logo.png"}} }),
		"a name of any printable characters": with(func(s map[string]any) {
			s["sender"] = map[string]any{"name": `Sécurité "Campus", <ops@example.com> — Zoë 😀`, "replyTo": "Safety@Example.com", "callerId": "+15550100"}
		}),
		"hashtags that leave room on network A": with(func(s map[string]any) {
			s["socialMedia"] = map[string]any{"hashtags": []string{"Schnee_Tag", "#été2026"}, "includeLink": true}
			s["content"] = map[string]any{"link": "https://county.example/storm"}
			s["channels"] = map[string]any{"socialPostA": map[string]any{"enabled": true}}
		}),
		"distinct ids": with(func(s map[string]any) {
			s["type"] = "Poll"
			s["survey"] = map[string]any{"questions": []map[string]any{
				{"id": 2, "text": "q", "options": []map[string]any{{"id": 1, "text": "a"}, {"text": "b"}}},
				{"text": "q2", "options": []map[string]any{{"text": "c"}, {"text": "d"}}},
			}}
		}),
	} {
		if r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, body); r.Status != http.StatusOK {
			t.Errorf("%s: preview %d %s", name, r.Status, r.Body)
		}
	}
}

func TestAnotherTenantSeesNothing(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "T", Last: "T", Email: "t@example.com"}
	seed(t, s, tenant, c)
	res := send(t, s, tok, map[string]any{"settings": map[string]any{
		"message": map[string]any{"subject": "Mine", "body": "Mine"}, "recipients": map[string]any{"contactIds": []int64{c.ID}},
	}})
	waitDone(t, s, tok, res.AlertID)
	_, other := s.NewTenant(t)
	for _, p := range []string{"", "/status", "/results", "/results/recipients", "/results/recipients/1", "/results/channels/aggregatedSummary",
		"/results/channels/email", "/results/channels/text", "/results/channels/voice", "/results/channels/etn", "/results/channels/social/neighborhood"} {
		r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d%s", res.AlertID, p), other, nil)
		if r.Status != http.StatusNotFound {
			t.Errorf("GET %s as another tenant: %d %s", p, r.Status, r.Body)
		}
		if r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d%s", res.AlertID, p), tok, nil); r.Status != 200 {
			t.Errorf("GET %s as the owner: %d %s", p, r.Status, r.Body)
		}
	}
	r := s.Do(t, http.MethodPost, "/v2/alerts/find", other, map[string]any{})
	if !strings.Contains(string(r.Body), `"totalCount":0`) {
		t.Errorf("find as another tenant: %s", r.Body)
	}
	r = s.Do(t, http.MethodGet, "/v3/user/alerts/sent", other, nil)
	if !strings.Contains(string(r.Body), `"totalCount":0`) {
		t.Errorf("sent as another tenant: %s", r.Body)
	}
	r = s.Do(t, http.MethodPost, fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant), other, map[string]any{"alerts": []any{}})
	if r.Status != http.StatusNotFound {
		t.Errorf("bulk send into another tenant: %d", r.Status)
	}
}

func TestBulkSendOneBadAlertDoesNotSinkTheOthers(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "B", Last: "B", Email: "b@example.com"}
	seed(t, s, tenant, c)
	good := map[string]any{"settings": map[string]any{"message": map[string]any{"subject": "Good", "body": "ok"},
		"recipients": map[string]any{"contactIds": []int64{c.ID}}}, "jobId": "bulk-1"}
	bad := map[string]any{"settings": map[string]any{"message": map[string]any{"subject": "Bad", "body": "ok"},
		"recipients": map[string]any{"groups": []map[string]any{{"id": 424242424}}}}}
	body := map[string]any{"alerts": []any{good, bad}}
	type result struct {
		Accepted, Rejected int
		Results            []struct {
			Index    int
			Accepted bool
			Status   int
			Alert    *struct {
				AlertID  int64
				Replayed bool
			}
			Errors []struct{ Location string }
		}
	}
	var res, again result
	r := s.Do(t, http.MethodPost, fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant), tok, body)
	r.JSON(t, &res)
	if r.Status != 200 || res.Accepted != 1 || res.Rejected != 1 || len(res.Results) != 2 {
		t.Fatalf("bulk %d %s", r.Status, r.Body)
	}
	if res.Results[1].Accepted || res.Results[1].Status != 400 || res.Results[1].Errors[0].Location != "body.alerts[1].settings.recipients.groups" {
		t.Fatalf("bad item %s", r.Body)
	}
	r = s.Do(t, http.MethodPost, fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant), tok, body)
	r.JSON(t, &again)
	if again.Results[0].Alert == nil || res.Results[0].Alert.AlertID != again.Results[0].Alert.AlertID || !again.Results[0].Alert.Replayed {
		t.Fatalf("the retried jobId created a second alert: %s", r.Body)
	}
	if r := s.Do(t, http.MethodPost, fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant), tok, map[string]any{"alerts": []any{}}); r.Status != 400 {
		t.Fatalf("empty bulk: %d", r.Status)
	}
}

// TestBulkSendRefusesAMalformedAlertAlone: an alert that does not fit the
// SendAlertRequest schema (missing properties, wrong types, a number its
// field cannot hold, not an object) is refused in its own result, located
// inside body.alerts[i], and the other alerts of the batch are sent. What
// concerns the whole request (the number of alerts, unknown properties, a
// property given twice anywhere in the body) still refuses it all.
func TestBulkSendRefusesAMalformedAlertAlone(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	path := fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant)
	good := `{"settings": {"message": {"subject": "Good", "body": "ok"}, "recipients": {"adHoc": [{"email": "good@example.com"}]}}}`
	body := `{"alerts": [` + good + `,
		{"settings": {"message": {"subject": "s"}}},
		{"settings": {"message": {"subject": 7, "body": "ok"}, "recipients": {"adHoc": [{"email": "x@example.com"}]}}},
		{"settings": {"message": {"subject": "s", "body": "ok"}, "recipients": {"contactIds": [1e19]}}},
		null,
		` + good + `]}`
	r := s.Do(t, http.MethodPost, path, tok, []byte(body))
	var res struct {
		Accepted, Rejected int
		Results            []struct {
			Index    int
			Accepted bool
			Status   int
			Alert    *struct{ AlertID int64 }
			Errors   []struct{ Location, ErrorMessage string }
		}
	}
	r.JSON(t, &res)
	if r.Status != http.StatusOK || res.Accepted != 2 || res.Rejected != 4 || len(res.Results) != 6 {
		t.Fatalf("bulk with malformed alerts: %d %s", r.Status, r.Body)
	}
	for _, i := range []int{0, 5} {
		if a := res.Results[i]; !a.Accepted || a.Status != http.StatusCreated || a.Alert == nil || a.Alert.AlertID == 0 {
			t.Errorf("good alert %d: %+v", i, a)
		}
	}
	want := map[int]string{
		1: "body.alerts[1].settings.message.body",
		2: "body.alerts[2].settings.message.subject",
		3: "body.alerts[3].settings.recipients.contactIds[0]",
		4: "body.alerts[4]",
	}
	for i, loc := range want {
		a := res.Results[i]
		found := false
		for _, e := range a.Errors {
			if !strings.HasPrefix(e.Location, fmt.Sprintf("body.alerts[%d]", i)) {
				t.Errorf("alert %d: failure outside it: %+v", i, e)
			}
			found = found || e.Location == loc
		}
		if a.Index != i || a.Accepted || a.Status != http.StatusBadRequest || a.Alert != nil || !found {
			t.Errorf("alert %d: want a 400 at %s: %+v", i, loc, a)
		}
	}
	if n := alertCount(t, s, tok); n != 2 {
		t.Fatalf("%d alerts, want the 2 good ones", n)
	}

	// The request as a whole is still checked before any alert is sent.
	many := make([]string, 101)
	for i := range many {
		many[i] = good
	}
	for body, loc := range map[string]string{
		`{"alerts": [` + good + `], "extra": 1}`:                                   "body.extra",
		`{"alerts": [` + strings.Join(many, ",") + `]}`:                            "body.alerts",
		`{"alerts": [` + good + `, {"jobId": "a", "JobId": "b", "settings": {}}]}`: "body.alerts[1].JobId",
		`{"alerts": "x"}`: "body.alerts",
	} {
		r := s.Do(t, http.MethodPost, path, tok, []byte(body))
		found := false
		for _, f := range problem(t, r).Errors {
			found = found || f.Location == loc
		}
		if r.Status != http.StatusBadRequest || !found {
			t.Errorf("%.80s: want a 400 at %s: %d %s", body, loc, r.Status, r.Body)
		}
	}
	if n := alertCount(t, s, tok); n != 2 {
		t.Fatalf("%d alerts after refused requests, want 2", n)
	}
}

func TestFindSentAndDefaults(t *testing.T) {
	t.Parallel()
	_, withSandbox := stacktest.Sandbox(t)
	s := stacktest.Start(t, withSandbox)
	tenant, tok := s.NewTenant(t)
	c := &contact{First: "F", Last: "F", Email: "f@example.com", Phone: "+15554440001"}
	seed(t, s, tenant, c)

	// Defaults: built in first, then the tenant's.
	r := s.Do(t, http.MethodPost, "/v2/alerts/defaults", tok, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"channels":["email"]`) || !strings.Contains(string(r.Body), `"customized":false`) {
		t.Fatalf("defaults %d %s", r.Status, r.Body)
	}
	r = s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, map[string]any{
		"type": "Default", "priority": "Emergency", "channels": []string{"text"}, "loudTone": true,
		"workflow": map[string]any{"cycles": 1}, "sender": map[string]any{"name": "Ops Center"},
	})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"customized":true`) {
		t.Fatalf("update defaults %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, map[string]any{"type": "Default", "priority": "NonEmergency", "channels": []string{"fax2"},
		"loudTone": false, "workflow": map[string]any{}, "sender": map[string]any{}}); r.Status != 400 {
		t.Fatalf("bad defaults: %d %s", r.Status, r.Body)
	}

	mk := func(subject, incident, facility string, hidden bool) int64 {
		settings := map[string]any{"message": map[string]any{"subject": subject, "body": "b"},
			"recipients": map[string]any{"contactIds": []int64{c.ID}}, "security": map[string]any{"hidden": hidden}}
		if incident != "" {
			settings["incident"] = map[string]any{"name": incident}
		}
		if facility != "" {
			settings["facility"] = map[string]any{"facilities": []map[string]any{{"name": facility}}}
		}
		return send(t, s, tok, map[string]any{"settings": settings}).AlertID
	}
	a1 := mk("Storm coming", "Winter storm", "North plant", false)
	a2 := mk("Gas leak", "", "South plant", false)
	a3 := mk("Secret drill", "", "", true)
	for _, id := range []int64{a1, a2, a3} {
		waitDone(t, s, tok, id)
	}
	// The alert took the tenant's defaults: text, Emergency, the sender.
	r = s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d", a1), tok, nil)
	body := string(r.Body)
	if !strings.Contains(body, `"priority":"Emergency"`) || !strings.Contains(body, `"name":"Ops Center"`) ||
		!strings.Contains(body, `"channel":"text"`) {
		t.Fatalf("alert with defaults: %s", body)
	}
	get := func(path string) []int64 {
		t.Helper()
		r := s.Do(t, http.MethodGet, path, tok, nil)
		var page struct{ Items []struct{ ID int64 } }
		r.JSON(t, &page)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		var ids []int64
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		return ids
	}
	check := func(path string, want ...int64) {
		t.Helper()
		got := get(path)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
	today := time.Now().UTC().Format("2006-01-02")
	tomorrow := time.Now().UTC().Add(24 * time.Hour).Format("2006-01-02")
	check("/v3/user/alerts/sent", a2, a1)
	check("/v3/user/alerts/sent?sort=createdAt", a1, a2)
	check("/v3/user/alerts/sent?hidden=true", a3)
	check("/v3/user/alerts/sent?incident=winter", a1)
	check("/v3/user/alerts/sent?facilityName=south%20plant", a2)
	check("/v3/user/alerts/sent?subject=GAS", a2)
	check("/v3/user/alerts/sent?from=ops", a2, a1)
	check("/v3/user/alerts/sent?from=nobody")
	check("/v3/user/alerts/sent?alertCompletion=Sent,Failed&messagepriority=Emergency&alertType=Default", a2, a1)
	check("/v3/user/alerts/sent?alertCompletion=Processing")
	check("/v3/user/alerts/sent?alertType=Poll")
	check("/v3/user/alerts/sent?after="+today+"&before="+tomorrow, a2, a1)
	check("/v3/user/alerts/sent?after=" + tomorrow)
	// RFC 3339 offsets go up to ±23:59, past what PostgreSQL takes.
	yesterdayFarEast := time.Now().UTC().Add(-24 * time.Hour).In(time.FixedZone("", 23*3600+59*60)).Format(time.RFC3339)
	check("/v3/user/alerts/sent?after="+url.QueryEscape(yesterdayFarEast), a2, a1)
	check("/v3/user/alerts/sent?pageSize=1&page=2", a1)
	if r := s.Do(t, http.MethodGet, "/v3/user/alerts/sent?after=yesterday", tok, nil); r.Status != 400 {
		t.Errorf("bad date: %d", r.Status)
	}
	if r := s.Do(t, http.MethodGet, "/v3/user/alerts/sent?alertCompletion=Done", tok, nil); r.Status != 400 {
		t.Errorf("bad completion: %d", r.Status)
	}
	if r := s.Do(t, http.MethodGet, "/v3/user/alerts/sent?sort=color", tok, nil); r.Status != 400 {
		t.Errorf("bad sort: %d", r.Status)
	}
	// Another user of the tenant has sent nothing.
	if r := s.Do(t, http.MethodGet, "/v3/user/alerts/sent", tokFor(t, s, tenant, "someone-else"), nil); !strings.Contains(string(r.Body), `"totalCount":0`) {
		t.Errorf("another user's sent alerts: %s", r.Body)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts/find?sort=subject", tok, map[string]any{"statuses": []string{"Sent"}, "ids": []int64{a1, a2, a3}, "after": "2000-01-01T00:00:00-16:00"})
	var page struct{ Items []struct{ ID int64 } }
	r.JSON(t, &page)
	if len(page.Items) != 2 || page.Items[0].ID != a2 {
		t.Errorf("find: %s", r.Body)
	}
}

func TestMultipartAlertIsValidatedLikeJSON(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	post := func(alert string) stacktest.Response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("alert", alert)
		_ = mw.Close()
		return s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, &buf, "Content-Type", mw.FormDataContentType())
	}
	cases := map[string]string{
		`{"settings": {"message": {"subject": "", "body": "b"}, "recipients": {"contactIds": [1]}}}`:                           "body.alert.settings.message.subject",
		`{"settings": {"message": {"subject": "s", "body": "b"}, "recipients": {}, "channels": {"pager": {"enabled": true}}}}`: "body.alert.settings.channels",
		`{"settings": {"message": {"subject": "s", "body": "b"}, "recipients": {}}}`:                                           "body.alert.settings.recipients",
		`not json`: "body.alert",
		`[1]`:      "body.alert",
	}
	// Parts the form does not have, or of the wrong kind, are named rather
	// than dropped: a file part without a filename arrives as text.
	for part, want := range map[string]string{"attachement": "not a part of this form", "attachment": "must be a file part"} {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("alert", `{"settings": {"message": {"subject": "s", "body": "b"}, "recipients": {"contactIds": [1]}}}`)
		_ = mw.WriteField(part, "%PDF-1.4")
		_ = mw.Close()
		r := s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, &buf, "Content-Type", mw.FormDataContentType())
		if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != "body."+part || !strings.Contains(p.Errors[0].ErrorMessage, want) {
			t.Errorf("part %s: %d %s", part, r.Status, r.Body)
		}
	}
	// Each part is given once, as a form-data part with a name; what a form
	// reader would drop or cannot tell apart is refused naming the part.
	alert := `{"settings": {"message": {"subject": "s", "body": "b"}, "recipients": {"contactIds": [1]}}}`
	part := func(disposition, value string) string {
		return "--B\r\nContent-Disposition: " + disposition + "\r\n\r\n" + value + "\r\n"
	}
	for _, c := range []struct{ name, body, location, message string }{
		{"two attachments", part(`form-data; name="alert"`, alert) + part(`form-data; name="attachment"; filename="a.txt"`, "a") +
			part(`form-data; name="attachment"; filename="b.txt"`, "b"), "body.attachment", "given more than once"},
		{"two alerts", part(`form-data; name="alert"`, alert) + part(`form-data; name="alert"`, alert), "body.alert", "given more than once"},
		{"attachments in a multipart/mixed part", part(`form-data; name="alert"`, alert) +
			"--B\r\nContent-Disposition: form-data; name=\"attachment\"\r\nContent-Type: multipart/mixed; boundary=C\r\n\r\n" +
			"--C\r\nContent-Disposition: attachment; filename=\"a.txt\"\r\n\r\na\r\n--C\r\n" +
			"Content-Disposition: attachment; filename=\"b.txt\"\r\n\r\nb\r\n--C--\r\n\r\n", "body.attachment", "given more than once"},
		{"an attachment disposition", part(`form-data; name="alert"`, alert) + part(`attachment; name="attachment"; filename="a.txt"`, "a"),
			"body.attachment", "Content-Disposition attachment"},
		{"a part without a name", part(`form-data; name="alert"`, alert) + part(`form-data; filename="a.txt"`, "a"), "body", "without a name"},
		{"a file too many", part(`form-data; name="alert"`, alert) + part(`form-data; name="attachment"; filename="a.txt"`, "a") +
			part(`form-data; name="jobId"`, "j") + part(`form-data; name="attachment"; filename="a.txt"`, "a"), "body.attachment", "given more than once"},
	} {
		r := s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, strings.NewReader(c.body+"--B--\r\n"), "Content-Type", "multipart/form-data; boundary=B")
		p := problem(t, r)
		if r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != c.location ||
			p.Errors[0].PropertyName != strings.TrimPrefix(strings.TrimPrefix(c.location, "body"), ".") || !strings.Contains(p.Errors[0].ErrorMessage, c.message) {
			t.Errorf("%s: %d %s, want a failure at %s saying %q", c.name, r.Status, r.Body, c.location, c.message)
		}
	}
	for alert, field := range cases {
		r := post(alert)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", alert, r.Status, r.Body)
		}
		found := false
		for _, f := range problem(t, r).Errors {
			found = found || strings.HasPrefix(f.Location, field)
		}
		if !found {
			t.Errorf("%s: no failure at %s: %s", alert, field, r.Body)
		}
	}
}

// TestBulkSendNeedsAlertsAndHonoursItsIdempotencyKey: a bulk send without
// alerts (null, empty, absent) is a 400 naming body.alerts, and an
// Idempotency-Key makes a retry of the batch create none of its alerts
// twice, while an alert's own jobId still keys it.
func TestBulkSendNeedsAlertsAndHonoursItsIdempotencyKey(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	path := fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant)
	for _, body := range []string{`{"alerts":null}`, `{"alerts":[]}`, `{}`} {
		r := s.Do(t, http.MethodPost, path, tok, []byte(body))
		if r.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", body, r.Status, r.Body)
		}
		found := false
		for _, f := range problem(t, r).Errors {
			// An absent property is reported at body, naming it.
			found = found || f.Location == "body.alerts" || (body == `{}` && strings.Contains(f.ErrorMessage, "alerts"))
		}
		if !found {
			t.Fatalf("%s: no failure at body.alerts: %s", body, r.Body)
		}
	}

	alert := func(subject, jobID string, recipients map[string]any) map[string]any {
		a := map[string]any{"settings": map[string]any{"message": map[string]any{"subject": subject, "body": "ok"}, "recipients": recipients}}
		if jobID != "" {
			a["jobId"] = jobID
		}
		return a
	}
	to := map[string]any{"adHoc": []map[string]any{{"email": "bulk@example.com"}}}
	batch := map[string]any{"alerts": []any{
		alert("Keyed by the header", "", to),
		alert("Refused", "", map[string]any{"groups": []map[string]any{{"id": 424242424}}}),
		alert("Keyed by its jobId", "own-1", to),
	}}
	type result struct {
		Accepted, Rejected int
		Results            []struct {
			Status int
			Alert  *struct {
				AlertID  int64
				JobID    string
				Replayed bool
			}
		}
	}
	bulk := func(key string) result {
		t.Helper()
		r := s.Do(t, http.MethodPost, path, tok, batch, "Idempotency-Key", key)
		var res result
		r.JSON(t, &res)
		if r.Status != http.StatusOK || res.Accepted != 2 || res.Rejected != 1 || len(res.Results) != 3 {
			t.Fatalf("bulk with key %s: %d %s", key, r.Status, r.Body)
		}
		return res
	}
	// A single alert keyed as a batch's alert might look is another alert.
	single := send(t, s, tok, textAlert("Single.", map[string]any{"adHoc": []map[string]any{{"firstName": "A", "lastName": "B", "phone": "+15557770001"}}}), "Idempotency-Key", "batch-1/0")
	first := bulk("batch-1")
	if a := first.Results[0].Alert; !strings.HasPrefix(a.JobID, "bulk:") || a.AlertID == single.AlertID || a.Replayed || first.Results[0].Status != http.StatusCreated {
		t.Fatalf("first alert of the batch: %+v", a)
	}
	if a := first.Results[2].Alert; a.JobID != "own-1" || a.Replayed {
		t.Fatalf("the alert with its own jobId: %+v", a)
	}
	again := bulk("batch-1")
	for _, i := range []int{0, 2} {
		if a := again.Results[i].Alert; a.AlertID != first.Results[i].Alert.AlertID || !a.Replayed || again.Results[i].Status != http.StatusOK {
			t.Errorf("the retry's alert %d: %+v, want alert %d replayed", i, a, first.Results[i].Alert.AlertID)
		}
	}
	if n := alertCount(t, s, tok); n != 3 {
		t.Fatalf("%d alerts after retrying the batch with its key, want 3 (one single, two of the batch)", n)
	}
	other := bulk("batch-2")
	if a := other.Results[0].Alert; a.AlertID == first.Results[0].Alert.AlertID || a.Replayed || a.JobID == first.Results[0].Alert.JobID {
		t.Errorf("another key's first alert: %+v", a)
	}
	if a := other.Results[2].Alert; a.AlertID != first.Results[2].Alert.AlertID || !a.Replayed {
		t.Errorf("another key's alert with the jobId: %+v", a)
	}
}

// TestIdempotencyKeysThatDisagreeAreRefused: a request that gives two
// different keys (header and jobId, or the form's jobId and its alert's)
// is a 400 naming the second, since a retry giving only the other would
// create the alert again; the same key in both places is one key.
func TestIdempotencyKeysThatDisagreeAreRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	_, tok := s.NewTenant(t)
	alert := textAlert("Keys.", map[string]any{"adHoc": []map[string]any{{"firstName": "A", "lastName": "B", "phone": "+15557770002"}}})
	alert["jobId"] = "job-J"
	r := s.Do(t, http.MethodPost, "/v2/alerts", tok, alert, "Idempotency-Key", "key-K")
	if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != "body.jobId" {
		t.Fatalf("header and jobId that differ: %d %s", r.Status, r.Body)
	}
	first := send(t, s, tok, alert, "Idempotency-Key", "job-J")
	if again := send(t, s, tok, alert); again.AlertID != first.AlertID || !again.Replayed {
		t.Fatalf("the same key in both places is one key: %+v, then %+v", first, again)
	}

	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	raw, _ := json.Marshal(alert)
	_ = mw.WriteField("alert", string(raw))
	_ = mw.WriteField("jobId", "job-other")
	_ = mw.Close()
	r = s.Do(t, http.MethodPost, "/v2/alertsWithAttachments", tok, &buf, "Content-Type", mw.FormDataContentType())
	if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != "body.alert.jobId" {
		t.Fatalf("form jobId and alert jobId that differ: %d %s", r.Status, r.Body)
	}

	// A header read as one value, given twice, is refused rather than read
	// once.
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v2/alerts", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Idempotency-Key", "job-J")
	req.Header.Add("Idempotency-Key", "key-K")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if p := problem(t, stacktest.Response{Status: res.StatusCode, Header: res.Header, Body: b}); res.StatusCode != http.StatusBadRequest || p.Errors[0].Location != "header.Idempotency-Key" {
		t.Fatalf("two Idempotency-Key headers: %d %s", res.StatusCode, b)
	}
}

// TestBulkSendBoundsEachRefusal: an alert refused inside a batch is told
// why as boundedly as one sent alone: its errors quote a preview of what
// it holds, and at most 20 are listed.
func TestBulkSendBoundsEachRefusal(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	tenant, tok := s.NewTenant(t)
	long := map[string]any{"settings": map[string]any{"message": map[string]any{"subject": "Long", "body": "{{" + strings.Repeat("x", 19_000) + "}}"},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "a@example.com"}}}}}
	var adHoc []map[string]any
	for i := range 30 {
		adHoc = append(adHoc, map[string]any{"email": fmt.Sprintf("Ada %d <ada%d@example.com>", i, i)})
	}
	many := map[string]any{"settings": map[string]any{"message": map[string]any{"subject": "Many", "body": "ok"},
		"recipients": map[string]any{"adHoc": adHoc}}}
	r := s.Do(t, http.MethodPost, fmt.Sprintf("/v4/%s/alerts/bulkSend", tenant), tok, map[string]any{"alerts": []any{long, many}})
	var res struct {
		Rejected int
		Results  []struct {
			Errors     []struct{ ErrorMessage string }
			MoreErrors int
		}
	}
	r.JSON(t, &res)
	if r.Status != http.StatusOK || res.Rejected != 2 || len(res.Results) != 2 {
		t.Fatalf("bulk %d %.500s", r.Status, r.Body)
	}
	if len(r.Body) > 64<<10 {
		t.Errorf("the answer is %d bytes", len(r.Body))
	}
	if e := res.Results[0].Errors; len(e) != 1 || len(e[0].ErrorMessage) > 1024 {
		t.Errorf("the long variable: %d errors, the first %d bytes", len(e), len(e[0].ErrorMessage))
	}
	if m := res.Results[1]; len(m.Errors) != 20 || m.MoreErrors != 10 {
		t.Errorf("30 bad addresses: %d listed, %d more", len(m.Errors), m.MoreErrors)
	}
}
