package activities

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/tocsin/tocsin/internal/metrics"
)

// alertState is what the activities of one Activities value keep between
// calls: the deliveries, shortened texts and upload orphan counters, the per-tenant rate
// limiters and the renderers of the alerts being delivered, and the slots
// of image decoding (one worker process's lanes share them, see
// ShareState). It lives and dies with its Activities; renderers expire
// after renderTTL and at most renderCacheSize are kept.
type alertState struct {
	deliveries *prometheus.CounterVec
	// textShortened counts the text messages shortened to fit maxSegments.
	textShortened prometheus.Counter
	// imageSlots holds a value per image being decoded; its capacity is
	// TOCSIN_IMAGE_DECODE_CONCURRENCY.
	imageSlots   chan struct{}
	imageDecodes prometheus.Gauge
	imageWaits   prometheus.Counter
	// orphanObjects counts the objects the upload orphan sweep removed.
	orphanObjects prometheus.Counter
	mu            sync.Mutex
	limiters      map[string]*rate.Limiter
	cache         map[AlertRef]renderContext
}

// renderContext is an alert's renderer, kept between the batches of the
// alert that one worker runs.
type renderContext struct {
	renderer *alertRenderer
	loaded   time.Time
}

const (
	renderCacheSize = 16
	renderTTL       = 10 * time.Minute
)

// state returns the activities' state, set up on first use.
func (a *Activities) state() *alertState {
	a.stOnce.Do(func() {
		if a.st != nil {
			return
		}
		st := &alertState{limiters: map[string]*rate.Limiter{}, cache: map[AlertRef]renderContext{},
			imageSlots: make(chan struct{}, max(1, a.Config.ImageDecodeConcurrency))}
		a.st = st
		st.deliveries = metrics.Register(a.Metrics, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tocsin_deliveries_total",
			Help: "Alert deliveries by channel and outcome (sent, delivered, failed, skipped, retrying).",
		}, []string{"channel", "outcome"}))
		st.textShortened = metrics.Register(a.Metrics, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_text_shortened_total",
			Help: "Text messages whose recipient's values made them longer than the alert's maxSegments, shortened to fit before they were sent (each attempt at sending counts).",
		}))
		st.imageDecodes = metrics.Register(a.Metrics, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tocsin_image_decodes",
			Help: "Uploaded images being decoded by this worker process (at most TOCSIN_IMAGE_DECODE_CONCURRENCY).",
		}))
		st.imageWaits = metrics.Register(a.Metrics, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_image_decode_waits_total",
			Help: "Uploaded images that waited for a decoding slot of this worker process.",
		}))
		st.orphanObjects = metrics.Register(a.Metrics, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tocsin_upload_orphan_objects_removed_total",
			Help: "Objects of uploads whose process died before recording the file, removed by the upload orphan sweep.",
		}))
	})
	return a.st
}

// limiter returns the rate limiter of a tenant's channel.
func (st *alertState) limiter(tenant, channel string, perSecond float64) *rate.Limiter {
	st.mu.Lock()
	defer st.mu.Unlock()
	key := tenant + "|" + channel
	l, ok := st.limiters[key]
	if !ok {
		burst := int(perSecond)
		if burst < 1 {
			burst = 1
		}
		l = rate.NewLimiter(rate.Limit(perSecond), burst)
		st.limiters[key] = l
	}
	return l
}

// renderer returns the kept renderer of an alert, or nil.
func (st *alertState) renderer(ref AlertRef) *alertRenderer {
	st.mu.Lock()
	defer st.mu.Unlock()
	rc, ok := st.cache[ref]
	if !ok || time.Since(rc.loaded) >= renderTTL {
		return nil
	}
	return rc.renderer
}

// keepRenderer keeps an alert's renderer, first dropping expired ones and,
// when still full, the oldest.
func (st *alertState) keepRenderer(ref AlertRef, r *alertRenderer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	var oldest AlertRef
	var oldestAt time.Time
	for k, rc := range st.cache {
		switch {
		case now.Sub(rc.loaded) >= renderTTL:
			delete(st.cache, k)
		case oldestAt.IsZero() || rc.loaded.Before(oldestAt):
			oldest, oldestAt = k, rc.loaded
		}
	}
	if len(st.cache) >= renderCacheSize {
		delete(st.cache, oldest)
	}
	st.cache[ref] = renderContext{renderer: r, loaded: now}
}
