package hooks

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/internal/metrics"
)

// NewDeliveriesCounter returns tocsin_hook_deliveries_total{outcome},
// registered in reg (or the one already there), with every outcome at 0.
func NewDeliveriesCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tocsin_hook_deliveries_total",
		Help: "Hook delivery attempts (signed POSTs to subscribers), by outcome: Delivered, Failed, Gone or Refused.",
	}, []string{"outcome"}))
	for _, o := range Outcomes {
		c.WithLabelValues(string(o))
	}
	return c
}
