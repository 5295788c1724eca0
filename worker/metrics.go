package worker

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/tocsin/tocsin/internal/metrics"
)

// temporalLabels is the fixed label set of every Temporal SDK series. Tags the
// SDK sets that are not in this list are dropped; missing ones are empty.
var temporalLabels = []string{
	"namespace", "task_queue", "worker_type", "poller_type", "workflow_type",
	"activity_type", "operation", "failure_reason", "cause", "status_code",
}

// promMetrics exports the Temporal SDK's metrics to a Prometheus registry.
type promMetrics struct {
	reg        prometheus.Registerer
	mu         sync.Mutex
	counters   map[string]*prometheus.CounterVec
	gauges     map[string]*prometheus.GaugeVec
	histograms map[string]*prometheus.HistogramVec
}

// NewMetricsHandler returns a client.MetricsHandler that registers the SDK's
// counters, gauges and timers in reg.
func NewMetricsHandler(reg prometheus.Registerer) client.MetricsHandler {
	return &taggedMetrics{m: &promMetrics{
		reg:        reg,
		counters:   map[string]*prometheus.CounterVec{},
		gauges:     map[string]*prometheus.GaugeVec{},
		histograms: map[string]*prometheus.HistogramVec{},
	}, labels: prometheus.Labels{}}
}

type taggedMetrics struct {
	m      *promMetrics
	labels prometheus.Labels
}

func (t *taggedMetrics) WithTags(tags map[string]string) client.MetricsHandler {
	l := prometheus.Labels{}
	for k, v := range t.labels {
		l[k] = v
	}
	for k, v := range tags {
		l[k] = v
	}
	return &taggedMetrics{m: t.m, labels: l}
}

// values is the label set of a series. Each value is the label's own copy,
// in valid UTF-8 and of bounded length: a tag that shares memory with
// something reused later, or that is not UTF-8, would make the registry
// fail every scrape.
func (t *taggedMetrics) values() prometheus.Labels {
	out := make(prometheus.Labels, len(temporalLabels))
	for _, k := range temporalLabels {
		v := t.labels[k]
		if len(v) > 200 {
			v = v[:200]
		}
		out[k] = strings.Clone(strings.ToValidUTF8(v, "\uFFFD"))
	}
	return out
}

func metricName(name string) string {
	return strings.NewReplacer(".", "_", "-", "_").Replace(name)
}

// vec returns the vector of the metric name in vecs, made with newVec and
// registered the first time the SDK asks for it.
func vec[V prometheus.Collector](m *promMetrics, vecs map[string]V, name string, newVec func() V) V {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := vecs[name]
	if !ok {
		v = metrics.Register(m.reg, newVec())
		vecs[name] = v
	}
	return v
}

func (t *taggedMetrics) Counter(name string) client.MetricsCounter {
	c := vec(t.m, t.m.counters, name, func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricName(name), Help: "Temporal SDK counter " + name + "."}, temporalLabels)
	}).With(t.values())
	return counterFunc(func(d int64) { c.Add(float64(d)) })
}

func (t *taggedMetrics) Gauge(name string) client.MetricsGauge {
	return gaugeFunc(vec(t.m, t.m.gauges, name, func() *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricName(name), Help: "Temporal SDK gauge " + name + "."}, temporalLabels)
	}).With(t.values()).Set)
}

func (t *taggedMetrics) Timer(name string) client.MetricsTimer {
	h := vec(t.m, t.m.histograms, name, func() *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: metricName(name) + "_seconds", Help: "Temporal SDK timer " + name + ".",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, temporalLabels)
	}).With(t.values())
	return timerFunc(func(d time.Duration) { h.Observe(d.Seconds()) })
}

type counterFunc func(int64)

func (f counterFunc) Inc(d int64) { f(d) }

type gaugeFunc func(float64)

func (f gaugeFunc) Update(v float64) { f(v) }

type timerFunc func(time.Duration)

func (f timerFunc) Record(d time.Duration) { f(d) }
