package alerting

import (
	"sync"
	"time"
)

// backlogTTL is how long a counted backlog stands in for a new count while
// it is below the limits.
const backlogTTL = time.Second

// backlogEstimate keeps the backlog counts admit last read and adds the
// alerts this process admitted since, so most admissions need no count: a
// fresh estimate that stays below both limits admits at once. A stale one,
// or one that would reach a limit, is counted again, so a refusal always
// rests on a count; what other API processes admit within backlogTTL is
// the most a limit can be overshot by.
type backlogEstimate struct {
	mu      sync.Mutex
	tenants map[string]backlogCount
	overall backlogCount
}

type backlogCount struct {
	n  int
	at time.Time
}

// maxEstimatedTenants bounds the map; past it the estimates start over.
const maxEstimatedTenants = 10000

// admit admits one alert of tenant on the estimate alone, when it is fresh
// and stays below the limits (a limit of 0 is none), and counts it.
func (b *backlogEstimate) admit(tenant string, tenantLimit, limit int, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.tenants[tenant]
	if !ok || now.Sub(t.at) >= backlogTTL || now.Sub(b.overall.at) >= backlogTTL {
		return false
	}
	if (tenantLimit > 0 && t.n+1 >= tenantLimit) || (limit > 0 && b.overall.n+1 >= limit) {
		return false
	}
	t.n++
	b.tenants[tenant] = t
	b.overall.n++
	return true
}

// record keeps counts read at now, plus the alert admitted on them.
func (b *backlogEstimate) record(tenant string, ofTenant, overall int, admitted bool, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if admitted {
		ofTenant++
		overall++
	}
	if b.tenants == nil || len(b.tenants) >= maxEstimatedTenants {
		b.tenants = map[string]backlogCount{}
	}
	b.tenants[tenant] = backlogCount{ofTenant, now}
	b.overall = backlogCount{overall, now}
}
