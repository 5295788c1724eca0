// Package memtest measures the memory a piece of work takes, for tests and
// benchmarks that report it.
package memtest

import (
	"runtime"
	"sync/atomic"
	"time"
)

// PeakHeap samples the Go heap in use every millisecond until the returned
// function is called, which returns the peak.
func PeakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}
