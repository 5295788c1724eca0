package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/results"
)

// TestDefaultsThatCannotServeAnAlertAreRefused: defaults that would make
// every alert leaving out what they fill fail (a Poll or Conference type,
// no channels, a sender an alert could not give) are a 400 naming the
// field and change nothing; an alert
// without type or channels is still accepted. Defaults stored before the
// check are read with the built-in type and channels in their place, and
// without a sender name the rule of names refuses.
func TestDefaultsThatCannotServeAnAlertAreRefused(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)

	valid := func(change func(d map[string]any)) map[string]any {
		d := map[string]any{"type": "Default", "priority": "NonEmergency", "channels": []string{"text"}, "loudTone": false,
			"workflow": map[string]any{"cycles": 1}, "sender": map[string]any{}}
		change(d)
		return d
	}
	for _, c := range []struct {
		name, field, msg string
		body             map[string]any
	}{
		{"Poll", "body.type", "survey questions", valid(func(d map[string]any) { d["type"] = "Poll" })},
		{"Conference", "body.type", "conference invitation", valid(func(d map[string]any) { d["type"] = "Conference" })},
		{"null channels", "body.channels", "", valid(func(d map[string]any) { d["channels"] = nil })},
		{"no channels", "body.channels", "", valid(func(d map[string]any) { d["channels"] = []string{} })},
		{"a channel twice", "body.channels[1]", "twice", valid(func(d map[string]any) { d["channels"] = []string{"text", "text"} })},
		{"loud tone", "body.loudTone", "Emergency", valid(func(d map[string]any) { d["loudTone"] = true })},
		{"null workflow", "body.workflow", "", valid(func(d map[string]any) { d["workflow"] = nil })},
		{"a line break in the sender's name", "body.sender.name", "control character",
			valid(func(d map[string]any) { d["sender"] = map[string]any{"name": "Campus\r\nBcc: x@example.com"} })},
		{"a sender's name reversed", "body.sender.name", "bidirectional control",
			valid(func(d map[string]any) { d["sender"] = map[string]any{"name": "Bank \u202emoc.elpmaxe"} })},
		{"a Reply-To with a name", "body.sender.replyTo", "alone",
			valid(func(d map[string]any) { d["sender"] = map[string]any{"replyTo": "Safety <safety@example.com>"} })},
		{"a caller id that is no number", "body.sender.callerId", "",
			valid(func(d map[string]any) { d["sender"] = map[string]any{"callerId": "555-0100"} })},
	} {
		r := s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, c.body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			continue
		}
		expectFailure(t, problem(t, r).Errors, c.field, c.msg, r.Body)
	}
	r := s.Do(t, http.MethodPost, "/v2/alerts/defaults", tok, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"customized":false`) {
		t.Fatalf("the refusals changed the defaults: %d %s", r.Status, r.Body)
	}
	// A default Reply-To is kept in its one spelling, as an alert's.
	r = s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, valid(func(d map[string]any) { d["sender"] = map[string]any{"replyTo": "Safety@Example.COM"} }))
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"replyTo":"safety@example.com"`) {
		t.Fatalf("default Reply-To: %d %s", r.Status, r.Body)
	}
	alert := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Drill", "body": "This is a drill."},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "drill@example.com"}}},
	}}
	send(t, s, tok, alert)

	// Defaults a tenant stored before they were checked.
	if err := results.New(s.DB).SaveDefaults(context.Background(), tenant,
		[]byte(`{"type":"Poll","priority":"NonEmergency","channels":null,"workflow":{"cycles":1},"sender":{},"loudTone":false}`)); err != nil {
		t.Fatal(err)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts/defaults", tok, nil)
	if body := string(r.Body); r.Status != http.StatusOK || !strings.Contains(body, `"type":"Default"`) || !strings.Contains(body, `"channels":["email"]`) {
		t.Fatalf("stored defaults that cannot serve an alert: %d %s", r.Status, r.Body)
	}
	send(t, s, tok, alert)

	// A sender name stored before the rule of names refused what it
	// holds (a right-to-left mark, taken until then) does not make every
	// alert that gives no sender name a 400 naming a field it does not
	// give: it is left out, as the built-in defaults have none, and the
	// defaults read back can be written back.
	if err := results.New(s.DB).SaveDefaults(context.Background(), tenant,
		[]byte(`{"type":"Default","priority":"NonEmergency","channels":["email"],"workflow":{"cycles":1},"sender":{"name":"Campus \u200fSafety","callerId":"+14155550009"},"loudTone":false}`)); err != nil {
		t.Fatal(err)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts/defaults", tok, nil)
	var read struct {
		Defaults map[string]any `json:"defaults"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &read) != nil || read.Defaults == nil {
		t.Fatalf("stored defaults with a sender name the rule refuses: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), `Campus`) || !strings.Contains(string(r.Body), `"callerId":"+14155550009"`) {
		t.Errorf("stored defaults with a sender name the rule refuses read %s, want the name left out and the caller id kept", r.Body)
	}
	if r := s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, read.Defaults); r.Status != http.StatusOK {
		t.Errorf("the defaults read back written back: %d %s", r.Status, r.Body)
	}
	if err := results.New(s.DB).SaveDefaults(context.Background(), tenant,
		[]byte(`{"type":"Default","priority":"NonEmergency","channels":["email"],"workflow":{"cycles":1},"sender":{"name":"Campus \u200fSafety"},"loudTone":false}`)); err != nil {
		t.Fatal(err)
	}
	send(t, s, tok, alert)
}

// TestDefaultsFillFieldByField: the tenant's defaults fill what an alert
// leaves out field by field inside the blocks it gives, alike for a
// preview, a created alert and an alert of a bulk send; what the alert
// gives wins, false, 0 and "" too.
func TestDefaultsFillFieldByField(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	r := s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, map[string]any{
		"type": "Default", "priority": "Emergency", "channels": []string{"email"}, "loudTone": true,
		"workflow": map[string]any{"confirmationRequested": true, "cycles": 1, "cycleIntervalMinutes": 5, "broadcastDurationMinutes": 60},
		"sender":   map[string]any{"name": "Dflt Sender", "replyTo": "dflt@example.com"},
	})
	if r.Status != http.StatusOK {
		t.Fatalf("defaults: %d %s", r.Status, r.Body)
	}
	alert := func(settings map[string]any) map[string]any {
		settings["message"] = map[string]any{"subject": "Drill", "body": "This is a drill."}
		settings["recipients"] = map[string]any{"adHoc": []map[string]any{{"email": "drill@example.com"}}}
		return map[string]any{"settings": settings}
	}
	type shown struct {
		Settings struct {
			Priority map[string]any `json:"priority"`
			Workflow map[string]any `json:"workflow"`
			Sender   map[string]any `json:"sender"`
		} `json:"settings"`
	}
	// settings previews, creates and bulk-sends body and returns the
	// settings each shows.
	settings := func(body map[string]any) []shown {
		var out []shown
		r := s.Do(t, http.MethodPost, "/v2/alerts/preview", tok, body)
		if r.Status != http.StatusOK {
			t.Fatalf("preview: %d %s", r.Status, r.Body)
		}
		var p shown
		r.JSON(t, &p)
		out = append(out, p)
		ids := []int64{send(t, s, tok, body).AlertID}
		r = s.Do(t, http.MethodPost, "/v4/"+tenant+"/alerts/bulkSend", tok, map[string]any{"alerts": []any{body}})
		var bulk struct {
			Results []struct {
				Alert struct {
					AlertID int64 `json:"alertId"`
				} `json:"alert"`
			} `json:"results"`
		}
		r.JSON(t, &bulk)
		if r.Status != http.StatusOK || len(bulk.Results) != 1 || bulk.Results[0].Alert.AlertID == 0 {
			t.Fatalf("bulkSend: %d %s", r.Status, r.Body)
		}
		ids = append(ids, bulk.Results[0].Alert.AlertID)
		for _, id := range ids {
			r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d?replaceMessageVariables=false", id), tok, nil)
			if r.Status != http.StatusOK {
				t.Fatalf("get alert %d: %d %s", id, r.Status, r.Body)
			}
			var a shown
			r.JSON(t, &a)
			out = append(out, a)
		}
		return out
	}
	same := func(what string, got, want map[string]any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s: %s, want %s", what, g, w)
		}
	}

	for i, got := range settings(alert(map[string]any{
		"workflow": map[string]any{"cycles": 2},
		"sender":   map[string]any{"callerId": "+14155550009"},
		"priority": map[string]any{"priority": "Emergency"},
	})) {
		same(fmt.Sprint("filled workflow ", i), got.Settings.Workflow,
			map[string]any{"confirmationRequested": true, "cycles": 2, "cycleIntervalMinutes": 5, "broadcastDurationMinutes": 60})
		same(fmt.Sprint("filled sender ", i), got.Settings.Sender,
			map[string]any{"name": "Dflt Sender", "replyTo": "dflt@example.com", "callerId": "+14155550009"})
		same(fmt.Sprint("filled priority ", i), got.Settings.Priority,
			map[string]any{"priority": "Emergency", "loudTone": map[string]any{"enabled": true}})
	}
	// false, 0 and "" given by the alert win; a NonEmergency alert gets
	// no loud tone.
	for i, got := range settings(alert(map[string]any{
		"workflow": map[string]any{"confirmationRequested": false, "broadcastDurationMinutes": 0},
		"sender":   map[string]any{"name": ""},
		"priority": map[string]any{"priority": "NonEmergency"},
	})) {
		same(fmt.Sprint("given workflow ", i), got.Settings.Workflow, map[string]any{"cycles": 1, "cycleIntervalMinutes": 5})
		same(fmt.Sprint("given sender ", i), got.Settings.Sender, map[string]any{"replyTo": "dflt@example.com"})
		same(fmt.Sprint("given priority ", i), got.Settings.Priority, map[string]any{"priority": "NonEmergency"})
	}
}

// TestStoredDefaultsWithASenderTheRulesRefuseStillServeAlerts: a default
// sender name or Reply-To stored before the rules for them (a line
// separator or a bidirectional control in the name, a Reply-To with a
// display name) does not make every alert that leaves the sender out a
// 400 naming a field the caller never gave: the defaults are read without
// them, so the platform's From name stands, Emergency alerts go out, and
// what the defaults answer can be sent back. A stored name the rule takes
// is read in NFC.
func TestStoredDefaultsWithASenderTheRulesRefuseStillServeAlerts(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t)
	tenant, tok := s.NewTenant(t)
	if err := results.New(s.DB).SaveDefaults(context.Background(), tenant,
		[]byte(`{"type":"Default","priority":"Emergency","channels":["email"],"workflow":{"cycles":1},"sender":{"name":"Dept \u2028 x\u202e","replyTo":"Safety <safety@example.com>","callerId":"+15555550100"},"loudTone":false}`)); err != nil {
		t.Fatal(err)
	}
	r := s.Do(t, http.MethodPost, "/v2/alerts/defaults", tok, nil)
	var read struct {
		Defaults map[string]any `json:"defaults"`
	}
	r.JSON(t, &read)
	if r.Status != http.StatusOK {
		t.Fatalf("defaults: %d %s", r.Status, r.Body)
	}
	if snd, _ := read.Defaults["sender"].(map[string]any); snd["name"] != nil || snd["replyTo"] != nil || snd["callerId"] != "+15555550100" {
		t.Errorf("stored sender read as %v, want no name or Reply-To and the caller id kept", snd)
	}
	alert := map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Evacuate", "body": "Leave the building."},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "drill@example.com"}}},
	}}
	send(t, s, tok, alert)
	// What was read can be written back.
	if r := s.Do(t, http.MethodPut, "/v2/alerts/defaults", tok, read.Defaults); r.Status != http.StatusOK {
		t.Errorf("defaults read back: %d %s", r.Status, r.Body)
	}

	// A name the rule takes, stored in another normalization form, is
	// read (and so sent) in NFC.
	if err := results.New(s.DB).SaveDefaults(context.Background(), tenant,
		[]byte(`{"type":"Default","priority":"NonEmergency","channels":["email"],"workflow":{"cycles":1},"sender":{"name":"A\u0308rger"},"loudTone":false}`)); err != nil {
		t.Fatal(err)
	}
	r = s.Do(t, http.MethodPost, "/v2/alerts/defaults", tok, nil)
	if !strings.Contains(string(r.Body), `"name":"\u00c4rger"`) && !strings.Contains(string(r.Body), `"name":"Ärger"`) {
		t.Errorf("stored NFD name: %d %s", r.Status, r.Body)
	}
	send(t, s, tok, alert)
}
