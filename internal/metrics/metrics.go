// Package metrics is how tocsin's parts add their Prometheus collectors to
// the registry the wiring (internal/app) builds and passes them.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c with reg and returns it or, when reg already holds
// a collector of the same description (a second worker lane, a worker
// started again in the same process), the one registered first, so that
// both count in the same series. A nil reg registers nothing.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
	}
	return c
}
