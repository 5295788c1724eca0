package api_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// created posts body to path and decodes the 201 answer into v.
func created(t *testing.T, s *stacktest.Stack, path, token string, body, v any, headers ...string) {
	t.Helper()
	r := s.Do(t, http.MethodPost, path, token, body, headers...)
	if r.Status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
	}
	r.JSON(t, v)
}

// TestPathIntegersAreWrittenCanonically checks the one rule of integer
// path parameters over alerts, results, distribution lists, files,
// subscriptions and the directory's users and groups (whose ids are
// integers in strings): 1 names the row, while 01, +1, %2B1, %201, -1, 1.0
// and abc are a 400 naming the parameter, where some used to name row 1
// and others a 404.
func TestPathIntegersAreWrittenCanonically(t *testing.T) {
	t.Parallel()
	s := stacktest.Start(t, func(c *config.Config) {
		c.HookAllowHosts = []string{"127.0.0.1"}
		c.HookAllowHTTP = true
	})
	tenant, tok := s.NewTenant(t)

	var alert model.SendAlertResponse
	created(t, s, "/v2/alerts", tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "S", "body": "B"},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"firstName": "Ada", "lastName": "L", "email": "ada@example.com"}}},
	}}, &alert)
	var sub model.Subscription
	created(t, s, "/v2/settings/subscriptions", tok, map[string]any{"url": "http://127.0.0.1:9/h", "eventTypes": []string{"file.uploaded"}}, &sub)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("name", "canonical")
	fw, _ := mw.CreateFormFile("file", "c.csv")
	_, _ = fw.Write([]byte("firstName,lastName\r\nAda,Lovelace\r\n"))
	_ = mw.Close()
	var list model.CreateDistributionListFromFileResponse
	created(t, s, "/v4/"+tenant+"/distributionLists/createFromFile", tok, form.Bytes(), &list, "Content-Type", mw.FormDataContentType())
	dir := "/" + tenant + "/directory/main"
	var user struct{ ID string }
	created(t, s, dir+"/users", tok, map[string]any{"name": map[string]any{"first": "Grace", "last": "Hopper"}}, &user)
	var group model.GroupSummary
	created(t, s, dir+"/groups", tok, map[string]any{"name": "Canonical", "isPublic": true}, &group)
	if r := s.Do(t, http.MethodPost, dir+"/users/"+user.ID+"/notifications/memberships", tok, fmt.Sprint(group.ID)); r.Status != http.StatusNoContent {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}

	alertID, subID, listID, groupID := fmt.Sprint(alert.AlertID), fmt.Sprint(sub.ID), fmt.Sprint(list.DistributionList.ID), fmt.Sprint(group.ID)
	type op struct {
		method, param, value string
		path                 func(v string) string
		want                 int // the status of the canonical spelling value, when it is known
	}
	ops := []op{
		{http.MethodGet, "id", alertID, func(v string) string { return "/v2/alerts/" + v }, 200},
		{http.MethodGet, "id", alertID, func(v string) string { return "/v2/alerts/" + v + "/status" }, 200},
		{http.MethodGet, "alertId", alertID, func(v string) string { return "/v2/alerts/" + v + "/results/channels/email" }, 200},
		{http.MethodGet, "recipientId", "1", func(v string) string { return "/v2/alerts/" + alertID + "/results/recipients/" + v }, 0},
		{http.MethodGet, "id", subID, func(v string) string { return "/v2/settings/subscriptions/" + v }, 200},
		{http.MethodGet, "id", subID, func(v string) string { return "/v2/settings/subscriptions/" + v + "/history" }, 200},
		{http.MethodGet, "listId", listID, func(v string) string { return "/v4/" + tenant + "/distributionLists/" + v }, 200},
		{http.MethodGet, "tenantId", tenant, func(v string) string { return "/v4/" + v + "/distributionLists/" + listID }, 200},
		{http.MethodGet, "tenantId", tenant, func(v string) string { return "/v4/" + v + "/files" }, 200},
		{http.MethodGet, "tenantId", tenant, func(v string) string { return "/" + v + "/directory/main/users/" + user.ID }, 200},
		{http.MethodGet, "tenantId", tenant, func(v string) string { return "/" + v + "/directory/meta/languages" }, 200},
		{http.MethodGet, "userId", user.ID, func(v string) string { return dir + "/users/" + v }, 200},
		{http.MethodPost, "groupId", groupID, func(v string) string { return dir + "/groups/" + v + "/members" }, 200},
	}
	for _, o := range ops {
		v := o.value
		r := s.Do(t, o.method, o.path(v), tok, nil)
		if r.Status == http.StatusBadRequest || o.want != 0 && r.Status != o.want {
			t.Errorf("%s %s: %d, want %d: %s", o.method, o.path(v), r.Status, o.want, r.Body)
		}
		for _, bad := range []string{"0" + v, "00" + v, "+" + v, "%2B" + v, "%20" + v, v + "%20", "-" + v, v + ".0", "1e3", "0x1", "abc", "99999999999999999999"} {
			r := s.Do(t, o.method, o.path(bad), tok, nil)
			if r.Status != http.StatusBadRequest {
				t.Errorf("%s %s: %d, want 400: %s", o.method, o.path(bad), r.Status, r.Body)
				continue
			}
			p := problem(t, r)
			msg := rest.MsgCanonicalInteger
			if bad == "99999999999999999999" {
				msg = rest.MsgIntegerTooLarge
			}
			if len(p.Errors) != 1 || p.Errors[0].Location != "path."+o.param || p.Errors[0].PropertyName != o.param ||
				p.Errors[0].ErrorMessage != msg || p.Errors[0].AttemptedValue != bad {
				t.Errorf("%s %s: %s", o.method, o.path(bad), r.Body)
			}
		}
	}
	// 0 is written canonically: an id no row has.
	if r := s.Do(t, http.MethodGet, "/v2/alerts/0", tok, nil); r.Status != http.StatusNotFound {
		t.Errorf("alert 0: %d %s", r.Status, r.Body)
	}
	// Leaving a group by a spelling of its id other than the one it has
	// is a 400, as reading it is; its own spelling leaves it.
	mem := dir + "/users/" + user.ID + "/notifications/memberships/"
	if r := s.Do(t, http.MethodDelete, mem+"0"+groupID, tok, nil); r.Status != http.StatusBadRequest || problem(t, r).Errors[0].Location != "path.groupId" {
		t.Errorf("leave 0%s: %d %s", groupID, r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, mem+groupID, tok, nil); r.Status != http.StatusNoContent {
		t.Errorf("leave %s: %d %s", groupID, r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, "/v2/settings/subscriptions/0"+subID, tok, nil); r.Status != http.StatusBadRequest {
		t.Errorf("delete subscription 0%s: %d %s", subID, r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodGet, "/v2/settings/subscriptions/"+subID, tok, nil); r.Status != http.StatusOK {
		t.Errorf("the subscription is gone: %d %s", r.Status, r.Body)
	}
}

// TestEveryPathIDIsAnInteger checks that the rule of integer path
// parameters reaches every id in every path of the document: each is an
// integer, or a string of rest.IntegerPattern. The exceptions are the
// directory's name (any string) and a provider callback's tenant, which is
// answered 401 and nothing else until the body's signature verifies.
func TestEveryPathIDIsAnInteger(t *testing.T) {
	t.Parallel()
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name, In string
				Schema   struct {
					Type    any
					Pattern string
				}
			} `json:"parameters"`
		} `json:"paths"`
	}
	decodeDocument(t, &spec)
	n := 0
	for path, item := range spec.Paths {
		for method, op := range item {
			for _, p := range op.Parameters {
				if p.In != "path" || !(p.Name == "id" || strings.HasSuffix(p.Name, "Id")) ||
					p.Name == "directoryId" || op.OperationID == "receiveCallStatus" {
					continue
				}
				n++
				if p.Schema.Type != "integer" && (p.Schema.Type != "string" || p.Schema.Pattern != rest.IntegerPattern) {
					t.Errorf("%s %s: path parameter %s is a %s of pattern %q", method, path, p.Name, p.Schema.Type, p.Schema.Pattern)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d path ids", n)
	}
}

// TestPollOptionIDsAreBoundedAsOptionsAre: a poll option id given in a
// query is 1 to 100000, the bound of the ids a poll's options take
// (PollOptionModel), which also fits the integer column the answers are
// kept in. One past it, or past that column (2147483648), or the largest
// 64-bit number is a 400 naming the parameter, where pollOptionId beyond
// 32 bits was a 500 from the database.
func TestPollOptionIDsAreBoundedAsOptionsAre(t *testing.T) {
	t.Parallel()
	s := stacktest.Shared(t)
	_, tok := s.NewTenant(t)
	var alert model.SendAlertResponse
	created(t, s, "/v2/alerts", tok, map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "S", "body": "B"},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"adHoc": []map[string]any{{"email": "poll@example.com"}}},
	}}, &alert)
	path := fmt.Sprintf("/v2/alerts/%d/results/recipients?pollOptionId=", alert.AlertID)
	if r := s.Do(t, http.MethodGet, path+"100000", tok, nil); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"totalCount":0`) {
		t.Errorf("pollOptionId=100000: %d %s", r.Status, r.Body)
	}
	for _, v := range []string{"2147483648", "4294967296", "9223372036854775807", "100001"} {
		r := s.Do(t, http.MethodGet, path+v, tok, nil)
		if p := problem(t, r); r.Status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Location != "query.pollOptionId" {
			t.Errorf("pollOptionId=%s: %d %s", v, r.Status, r.Body)
		}
	}

	var spec struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string
				Schema struct{ Maximum *float64 }
			}
		}
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct{ Maximum *float64 }
			}
		}
	}
	decodeDocument(t, &spec)
	want := spec.Components.Schemas["PollOptionModel"].Properties["id"].Maximum
	n := 0
	for path, param := range map[string]string{
		"/v2/alerts/{id}/results/recipients": "pollOptionId", "/v2/public/alerts/responses/{token}": "optionId",
	} {
		for method, op := range spec.Paths[path] {
			for _, p := range op.Parameters {
				if p.Name != param {
					continue
				}
				n++
				if want == nil || p.Schema.Maximum == nil || *p.Schema.Maximum != *want {
					t.Errorf("%s %s: %s has maximum %v, want PollOptionModel.id's %v", method, path, param, p.Schema.Maximum, want)
				}
			}
		}
	}
	if n != 2 {
		t.Fatalf("found %d of the 2 poll option parameters in the document", n)
	}
}
