package subscriptions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/hooksubs"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// apiStack is the API alone: these tests create and list subscriptions,
// nothing is delivered.
func apiStack(t *testing.T) *stacktest.Stack {
	return stacktest.StartAPI(t, func(c *config.Config) {
		c.HookAllowHosts, c.HookAllowHTTP = []string{"127.0.0.1"}, true
	})
}

// checkTooMany checks that r is the 409 problem of a tenant at the cap,
// naming the body.
func checkTooMany(t *testing.T, r stacktest.Response) {
	t.Helper()
	var p rest.ProblemDetails
	if r.Status != http.StatusConflict || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("one subscription too many: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if err := json.Unmarshal(r.Body, &p); err != nil || len(p.Errors) != 1 || p.Errors[0].Location != "body" ||
		!strings.Contains(p.Detail, fmt.Sprint(hooksubs.MaxPerTenant)) {
		t.Fatalf("one subscription too many: %s (%v)", r.Body, err)
	}
}

// subscriptionCount is how many subscriptions the tenant (token) lists.
func subscriptionCount(t *testing.T, s *stacktest.Stack, token string) int64 {
	t.Helper()
	r := s.Do(t, http.MethodGet, base+"?pageSize=1", token, nil)
	var page struct{ TotalCount int64 }
	if r.Status != http.StatusOK {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &page)
	return page.TotalCount
}

// A tenant has at most hooksubs.MaxPerTenant subscriptions: creates that
// race for the last place let one through, the others are a 409 naming
// the body, and another tenant is not held by it.
func TestSubscriptionsAreCappedPerTenantEvenWhenCreatedAtOnce(t *testing.T) {
	t.Parallel()
	s := apiStack(t)
	tenant, token := s.NewTenant(t)
	_, otherToken := s.NewTenant(t)
	if _, err := storagetest.AddHookSubscriptions(t.Context(), s.DB, tenant, hooksubs.MaxPerTenant-1, "http://127.0.0.1:9/hook", storage.EventAlertSent); err != nil {
		t.Fatal(err)
	}

	const racers = 8
	answers := make([]stacktest.Response, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			answers[i] = s.Do(t, http.MethodPost, base, token, map[string]any{"url": fmt.Sprintf("http://127.0.0.1:9/hook/%d", i),
				"eventTypes": []string{storage.EventAlertSent}})
		})
	}
	wg.Wait()
	created := 0
	for _, r := range answers {
		if r.Status == http.StatusCreated {
			created++
			continue
		}
		checkTooMany(t, r)
	}
	if created != 1 {
		t.Fatalf("%d of %d creates racing for the last place passed, want 1", created, racers)
	}
	if n := subscriptionCount(t, s, token); n != hooksubs.MaxPerTenant {
		t.Fatalf("the tenant has %d subscriptions, want %d", n, hooksubs.MaxPerTenant)
	}
	checkTooMany(t, s.Do(t, http.MethodPost, base, token, map[string]any{"url": "http://127.0.0.1:9/hook", "eventTypes": []string{storage.EventAlertSent}}))
	create(t, s, otherToken, "http://127.0.0.1:9/hook", storage.EventAlertSent)

	// A place freed is a place to take.
	r := s.Do(t, http.MethodGet, base+"?pageSize=1", token, nil)
	var page struct{ Items []struct{ ID int64 } }
	r.JSON(t, &page)
	if d := s.Do(t, http.MethodDelete, fmt.Sprintf("%s/%d", base, page.Items[0].ID), token, nil); d.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", d.Status, d.Body)
	}
	create(t, s, token, "http://127.0.0.1:9/hook", storage.EventAlertSent)
}

// A tenant that had more subscriptions than the cap before it came keeps
// every one, and can read, change and delete them; it creates none until
// it has fewer than the cap.
func TestSubscriptionsOverTheCapKeepWorking(t *testing.T) {
	t.Parallel()
	s := apiStack(t)
	tenant, token := s.NewTenant(t)
	over := hooksubs.MaxPerTenant + 5
	ids, err := storagetest.AddHookSubscriptions(t.Context(), s.DB, tenant, over, "http://127.0.0.1:9/hook", storage.EventAlertSent)
	if err != nil {
		t.Fatal(err)
	}
	if n := subscriptionCount(t, s, token); n != int64(over) {
		t.Fatalf("the tenant lists %d subscriptions, want %d", n, over)
	}
	checkTooMany(t, s.Do(t, http.MethodPost, base, token, map[string]any{"url": "http://127.0.0.1:9/hook", "eventTypes": []string{storage.EventAlertSent}}))
	path := fmt.Sprintf("%s/%d", base, ids[0])
	if r := s.Do(t, http.MethodPut, path, token, map[string]any{"url": "http://127.0.0.1:9/other", "eventTypes": []string{storage.EventAlertFailed}}); r.Status != http.StatusOK {
		t.Fatalf("update over the cap: %d %s", r.Status, r.Body)
	}
	if r := s.Do(t, http.MethodDelete, path, token, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete over the cap: %d %s", r.Status, r.Body)
	}
	if n := subscriptionCount(t, s, token); n != int64(over-1) {
		t.Fatalf("the tenant lists %d subscriptions after a delete, want %d", n, over-1)
	}
	checkTooMany(t, s.Do(t, http.MethodPost, base, token, map[string]any{"url": "http://127.0.0.1:9/hook", "eventTypes": []string{storage.EventAlertSent}}))
}
