package alerting_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/auth"
	"github.com/tocsin/tocsin/internal/stacktest"
)

// contact is a person seeded for a test.
type contact struct {
	ID           int64
	First, Last  string
	Email, Phone string
	Lat, Lng     float64
	HasLocation  bool
	Custom       string // JSON object
}

func seed(t *testing.T, s *stacktest.Stack, tenant string, cs ...*contact) {
	t.Helper()
	ctx := context.Background()
	for _, c := range cs {
		custom := c.Custom
		if custom == "" {
			custom = "{}"
		}
		if err := s.DB.GetContext(ctx, &c.ID, `INSERT INTO people (tenant_id, first_name, last_name, custom_fields) VALUES ($1, $2, $3, $4) RETURNING id`,
			tenant, c.First, c.Last, custom); err != nil {
			t.Fatal(err)
		}
		if c.Email != "" {
			if _, err := s.DB.ExecContext(ctx, `INSERT INTO person_emails (tenant_id, person_id, address) VALUES ($1, $2, $3)`, tenant, c.ID, c.Email); err != nil {
				t.Fatal(err)
			}
		}
		if c.Phone != "" {
			if _, err := s.DB.ExecContext(ctx, `INSERT INTO person_phones (tenant_id, person_id, number) VALUES ($1, $2, $3)`, tenant, c.ID, c.Phone); err != nil {
				t.Fatal(err)
			}
		}
		if c.HasLocation {
			if _, err := s.DB.ExecContext(ctx, `INSERT INTO person_locations (tenant_id, person_id, name, latitude, longitude) VALUES ($1, $2, 'home', $3, $4)`,
				tenant, c.ID, c.Lat, c.Lng); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// group seeds a group (under parent when not zero) with members.
func group(t *testing.T, s *stacktest.Stack, tenant string, parent int64, members ...*contact) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	var parentID any
	parentPath := "/"
	if parent > 0 {
		parentID = parent
		if err := s.DB.GetContext(ctx, &parentPath, `SELECT path FROM groups WHERE id = $1`, parent); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB.GetContext(ctx, &id, `INSERT INTO groups (tenant_id, parent_id, name) VALUES ($1, $2, $3) RETURNING id`,
		tenant, parentID, "g-"+stacktest.Suffix()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB.ExecContext(ctx, `UPDATE groups SET path = $2 WHERE id = $1`, id, fmt.Sprintf("%s%d/", parentPath, id)); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if _, err := s.DB.ExecContext(ctx, `INSERT INTO group_memberships (tenant_id, group_id, person_id) VALUES ($1, $2, $3)`, tenant, id, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	return id
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

func tokFor(t *testing.T, s *stacktest.Stack, tenant, sub string) string {
	t.Helper()
	tok, err := auth.Mint(s.Config.JWTSecret, auth.Principal{Subject: sub, Tenant: tenant, Scopes: auth.AllScopes}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
