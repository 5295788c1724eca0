package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/internal/metrics"
)

// TestRegisterKeepsTheFirst: a collector registered again counts in the
// series of the first; without a registry it is used as it is.
func TestRegisterKeepsTheFirst(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	opts := prometheus.CounterOpts{Name: "tocsin_test_total", Help: "A test counter."}
	first := metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	again := metrics.Register(reg, prometheus.NewCounterVec(opts, []string{"outcome"}))
	first.WithLabelValues("a").Inc()
	again.WithLabelValues("a").Inc()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 || mfs[0].GetMetric()[0].GetCounter().GetValue() != 2 {
		t.Fatalf("gathered %v; want one series counting 2", mfs)
	}
	alone := prometheus.NewCounter(opts)
	if metrics.Register[prometheus.Counter](nil, alone) != alone {
		t.Fatal("without a registry the collector was not returned as it is")
	}
}
