package worker

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetricsHandlerRegistersEachMetricOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := NewMetricsHandler(reg)
	a := h.WithTags(map[string]string{"task_queue": "q", "namespace": "default"})
	b := h.WithTags(map[string]string{"task_queue": "other\xff", "ignored": "x"})
	a.Counter("temporal.request").Inc(2)
	b.Counter("temporal.request").Inc(1)
	a.Counter("temporal.request").Inc(3)
	a.Gauge("temporal-slots").Update(4)
	a.Gauge("temporal-slots").Update(7)
	a.Timer("temporal.latency").Record(1500 * time.Millisecond)
	b.Timer("temporal.latency").Record(time.Millisecond)

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			queue := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "task_queue" {
					queue = l.GetValue()
				}
			}
			key := f.GetName() + "/" + queue
			switch {
			case m.Counter != nil:
				got[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				got[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				got[key] = m.Histogram.GetSampleSum()
			}
		}
	}
	want := map[string]float64{
		"temporal_request/q": 5, "temporal_request/other\uFFFD": 1,
		"temporal_slots/q":           7,
		"temporal_latency_seconds/q": 1.5, "temporal_latency_seconds/other\uFFFD": 0.001,
	}
	if len(got) != len(want) {
		t.Errorf("%d series, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
}
