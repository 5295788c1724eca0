package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/activities"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
)

// emailList imports n contacts, r0@example.com to r<n-1>@example.com, as
// the tenant's distribution list name, and returns its id: the recipients
// of a small email alert, whose one batch runs inside the workflow task.
func emailList(t *testing.T, s *stacktest.Stack, tenant, name string, n int) int64 {
	t.Helper()
	file := "externalId,firstName,lastName,emails\n"
	for i := range n {
		file += fmt.Sprintf("%s-%d,R%d,Last,r%d@example.com\n", strings.ReplaceAll(name, " ", "-"), i, i, i)
	}
	listed := importContacts(t, s, tenant, name, file)
	if listed.Created != int64(n) {
		t.Fatalf("import %+v", listed)
	}
	return listed.DistributionList.ID
}

// listEmail is an email alert with subject to the distribution list.
func listEmail(subject string, list int64) map[string]any {
	return map[string]any{"settings": map[string]any{
		"message":    map[string]any{"subject": subject, "body": "Leave building B now."},
		"channels":   map[string]any{"email": map[string]any{"enabled": true}},
		"recipients": map[string]any{"distributionListIds": []int64{list}},
	}}
}

// emailBatch is the batch of the first cycle of a small email alert to n
// recipients.
func emailBatch(tenant string, alertID int64, n int) storage.BatchKey {
	return storage.BatchKey{Tenant: tenant, AlertID: alertID, Channel: "email", Cycle: 1, Lo: 0, Hi: int64(n)}
}

// keptEmails is how many emails the batch's progress in PostgreSQL
// records as left, -1 when it records nothing.
func keptEmails(t *testing.T, s *stacktest.Stack, k storage.BatchKey) int {
	t.Helper()
	raw, err := storage.BatchProgress(context.Background(), s.DB, k)
	if err != nil {
		t.Fatal(err)
	}
	if raw == nil {
		return -1
	}
	var p activities.BatchProgress
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return len(p.Sent)
}

// checkOneEmailEach checks that each of the n recipients of emailList got
// one email with subject.
func checkOneEmailEach(t *testing.T, s *stacktest.Stack, subject string, n int) {
	t.Helper()
	emails := map[string]int{}
	for _, e := range s.Sandbox.SMTP.Messages() {
		if e.Subject == subject {
			for _, to := range e.To {
				emails[strings.ToLower(to)]++
			}
		}
	}
	for i := range n {
		if got := emails[fmt.Sprintf("r%d@example.com", i)]; got != 1 {
			t.Errorf("r%d@example.com got %d emails %q, want 1 (all: %v)", i, got, subject, emails)
		}
	}
}
