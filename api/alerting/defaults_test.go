package alerting_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/results"
)

// TestDefaultsThatCannotServeAnAlertAreRefused: defaults that would make
// every alert leaving out what they fill fail (a Poll or Conference type,
// no channels) are a 400 naming the field and change nothing; an alert
// without type or channels is still accepted. Defaults stored before the
// check are read with the built-in type and channels in their place.
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
}
