package alerting_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/results"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestMain lets StartAPIProcess run the API in a process of its own.
func TestMain(m *testing.M) { stacktest.Main(m) }

// contact is a person seeded for a test.
type contact struct {
	ID           int64
	First, Last  string
	Email, Phone string
	Lat, Lng     float64
	HasLocation  bool
	Custom       string // JSON object
	Directory    string // the directory of the user; staff when empty
}

func (c *contact) directory() string {
	if c.Directory == "" {
		return "staff"
	}
	return c.Directory
}

// seed creates the contacts as a user would: each as a directory user
// (with its location, when it has one) through the directory API, then
// their email addresses, phone numbers and custom fields with a CSV import
// matched by external id (the import takes any E.164 number, the directory
// only numbers valid in their country).
func seed(t *testing.T, s *stacktest.Stack, tenant string, cs ...*contact) {
	t.Helper()
	tok := s.Token(t, tenant)
	batch := stacktest.Suffix()
	customs := make([]map[string]string, len(cs))
	var keys []string
	for i, c := range cs {
		if c.Custom != "" {
			if err := json.Unmarshal([]byte(c.Custom), &customs[i]); err != nil {
				t.Fatalf("custom fields %s: %v", c.Custom, err)
			}
			for k := range customs[i] {
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
		base := "/" + tenant + "/directory/" + c.directory() + "/users"
		var u struct{ ID string }
		s.Create(t, base, tok, map[string]any{"externalId": fmt.Sprintf("seed-%s-%d", batch, i),
			"name": map[string]any{"first": c.First, "last": c.Last}}).JSON(t, &u)
		id, err := strconv.ParseInt(u.ID, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		c.ID = id
		if c.HasLocation {
			s.Create(t, base+"/"+u.ID+"/notifications/locations", tok, map[string]any{"name": "home",
				"geoLocation": map[string]any{"latitude": c.Lat, "longitude": c.Lng}})
		}
	}
	sort.Strings(keys)
	w := &strings.Builder{}
	cw := csv.NewWriter(w)
	header := []string{"externalId", "firstName", "lastName", "emails", "mobilePhones"}
	for _, k := range keys {
		header = append(header, "custom."+k)
	}
	_ = cw.Write(header)
	for i, c := range cs {
		row := []string{fmt.Sprintf("seed-%s-%d", batch, i), c.First, c.Last, c.Email, c.Phone}
		for _, k := range keys {
			row = append(row, customs[i][k])
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	res := importContacts(t, s, tenant, "seed "+batch, w.String())
	if res.Created != 0 || res.Skipped != 0 || res.Rows != int64(len(cs)) {
		t.Fatalf("the import made or skipped contacts instead of completing the users: %+v", res)
	}
}

// importContacts uploads a CSV file of contacts as a new distribution list.
func importContacts(t *testing.T, s *stacktest.Stack, tenant, name, file string) model.CreateDistributionListFromFileResponse {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("name", name)
	fw, err := mw.CreateFormFile("file", "contacts.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(file))
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	r := s.Do(t, http.MethodPost, "/v4/"+tenant+"/distributionLists/createFromFile", s.Token(t, tenant), &buf, "Content-Type", mw.FormDataContentType())
	if r.Status != http.StatusCreated {
		t.Fatalf("import %q: %d %s", name, r.Status, r.Body)
	}
	var res model.CreateDistributionListFromFileResponse
	r.JSON(t, &res)
	return res
}

// list makes a distribution list of seeded contacts, matched by id.
func list(t *testing.T, s *stacktest.Stack, tenant, name string, members ...*contact) int64 {
	t.Helper()
	file := "id,firstName,lastName\n" // empty names leave the contacts' as they are
	for _, m := range members {
		file += fmt.Sprintf("%d,,\n", m.ID)
	}
	res := importContacts(t, s, tenant, name, file)
	if res.Created != 0 || res.DistributionList.MemberCount != int64(len(members)) {
		t.Fatalf("list of %d seeded contacts: %+v", len(members), res)
	}
	return res.DistributionList.ID
}

// group creates a public group (under parent when not zero) through the
// directory API, and the members join it.
func group(t *testing.T, s *stacktest.Stack, tenant string, parent int64, members ...*contact) int64 {
	t.Helper()
	tok := s.Token(t, tenant)
	body := map[string]any{"name": "g-" + stacktest.Suffix(), "isPublic": true}
	if parent > 0 {
		body["parentId"] = fmt.Sprint(parent)
	}
	r := s.Create(t, "/"+tenant+"/directory/staff/groups", tok, body)
	var g struct{ ID int64 }
	r.JSON(t, &g)
	for _, m := range members {
		path := fmt.Sprintf("/%s/directory/%s/users/%d/notifications/memberships", tenant, m.directory(), m.ID)
		if r := s.Do(t, http.MethodPost, path, tok, fmt.Sprint(g.ID)); r.Status != http.StatusNoContent {
			t.Fatalf("join group %d: %d %s", g.ID, r.Status, r.Body)
		}
	}
	return g.ID
}

// alertCount is how many alerts findAlerts shows the token's tenant.
func alertCount(t *testing.T, s *stacktest.Stack, token string) int64 {
	t.Helper()
	r := s.Do(t, http.MethodPost, "/v2/alerts/find?pageSize=1", token, map[string]any{})
	if r.Status != http.StatusOK {
		t.Fatalf("find alerts: %d %s", r.Status, r.Body)
	}
	var page rest.Paging
	r.JSON(t, &page)
	return page.TotalCount
}

// events returns the types of the tenant's recorded events, in order.
func events(t *testing.T, s *stacktest.Stack, tenant string) []string {
	t.Helper()
	all, err := storagetest.TenantEvents(context.Background(), s.DB, tenant)
	if err != nil {
		t.Fatal(err)
	}
	types := make([]string, len(all))
	for i, e := range all {
		types[i] = e.Type
	}
	return types
}

// deliveries returns every per-recipient delivery of the tenant's alert.
func deliveries(t *testing.T, s *stacktest.Stack, tenant string, alertID int64) []results.Delivery {
	t.Helper()
	ds, err := storagetest.AlertDeliveries(context.Background(), s.DB, tenant, alertID)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

type alertStatus struct {
	Status     string `json:"status"`
	Completed  bool   `json:"completed"`
	Recipients int64  `json:"recipients"`
	Deliveries struct {
		Total, Pending, Sent, Delivered, Failed, Final int64
	} `json:"deliveries"`
	History []struct {
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"history"`
}

func status(t *testing.T, s *stacktest.Stack, token string, id int64) alertStatus {
	t.Helper()
	r := s.Do(t, http.MethodGet, fmt.Sprintf("/v2/alerts/%d/status", id), token, nil)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var st alertStatus
	r.JSON(t, &st)
	return st
}

// waitDone waits until the alert's workflow completed.
func waitDone(t *testing.T, s *stacktest.Stack, token string, id int64) alertStatus {
	t.Helper()
	var st alertStatus
	stacktest.Eventually(t, 60*time.Second, "the alert to complete", func() bool {
		st = status(t, s, token, id)
		return st.Completed
	})
	return st
}

type sendResponse struct {
	AlertID    int64  `json:"alertId"`
	Status     string `json:"status"`
	WorkflowID string `json:"workflowId"`
	Replayed   bool   `json:"replayed"`
}

func send(t *testing.T, s *stacktest.Stack, token string, body any, headers ...string) sendResponse {
	t.Helper()
	r := s.Do(t, http.MethodPost, "/v2/alerts", token, body, headers...)
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		t.Fatalf("create alert: %d %s", r.Status, r.Body)
	}
	var res sendResponse
	r.JSON(t, &res)
	return res
}

func problem(t *testing.T, r stacktest.Response) rest.ProblemDetails {
	t.Helper()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("not a problem: %d %s", r.Status, r.Body)
	}
	var p rest.ProblemDetails
	r.JSON(t, &p)
	return p
}

// textAlert is an alert body for the text channel.
func textAlert(body string, recipients map[string]any) map[string]any {
	return map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": "Test alert", "body": body},
		"channels":   map[string]any{"text": map[string]any{"enabled": true}},
		"recipients": recipients,
	}}
}

// pollAlert is a Poll alert by text to contacts asking "Are you safe?",
// with the options Yes (1) and I need help (2).
func pollAlert(body string, contacts ...*contact) map[string]any {
	ids := make([]int64, len(contacts))
	for i, c := range contacts {
		ids[i] = c.ID
	}
	a := textAlert(body, map[string]any{"contactIds": ids})
	settings := a["settings"].(map[string]any)
	settings["type"] = "Poll"
	settings["survey"] = map[string]any{"questions": []map[string]any{{"text": "Are you safe?", "options": []map[string]any{
		{"text": "Yes", "severity": "None"}, {"text": "I need help", "severity": "High"},
	}}}}
	return a
}

func tokFor(t *testing.T, s *stacktest.Stack, tenant, sub string) string {
	t.Helper()
	tok, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: sub, Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
