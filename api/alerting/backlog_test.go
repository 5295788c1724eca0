package alerting

import (
	"testing"
	"time"
)

func TestBacklogEstimateAdmitsOnlyWhenFreshAndBelowTheLimits(t *testing.T) {
	var b backlogEstimate
	now := time.Now()
	if b.admit("1001", 10, 100, now) {
		t.Fatal("admitted with nothing counted")
	}
	b.record("1001", 3, 3, true, now) // 4 with the admitted one
	if !b.admit("1001", 10, 100, now) {
		t.Fatal("a fresh estimate well below the limits did not admit")
	}
	if b.tenants["1001"].n != 5 || b.overall.n != 5 {
		t.Fatalf("estimate %d/%d after admitting, want 5/5", b.tenants["1001"].n, b.overall.n)
	}
	// The next alert would reach the tenant's limit of 6: counted again.
	if b.admit("1001", 6, 100, now) {
		t.Fatal("admitted at the tenant's limit without a count")
	}
	if b.admit("1001", 100, 6, now) {
		t.Fatal("admitted at the overall limit without a count")
	}
	if b.admit("1001", 10, 100, now.Add(backlogTTL)) {
		t.Fatal("a stale estimate admitted")
	}
	if b.admit("1002", 10, 100, now) {
		t.Fatal("a tenant never counted was admitted")
	}
	b.record("1001", 9, 9, false, now) // refused: nothing added
	if b.tenants["1001"].n != 9 {
		t.Fatalf("a refusal added to the estimate: %d", b.tenants["1001"].n)
	}
}
