package hooks

import (
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Jitter is the share by which a retry wait is moved up or down at random.
const Jitter = 0.2

// MaxRetryAfter caps how long a receiver's Retry-After can make us wait.
const MaxRetryAfter = 24 * time.Hour

// Backoff returns the wait before retry number n (1-based) of a delivery:
// schedule[n-1] moved by up to ±20 %, and false when the schedule has no
// retry n. The jitter is derived from key and n, so a workflow computing it
// again on replay gets the same value.
func Backoff(schedule []time.Duration, key string, n int) (time.Duration, bool) {
	if n < 1 || n > len(schedule) {
		return 0, false
	}
	base := schedule[n-1]
	h := fnv.New64a()
	h.Write([]byte(key + "#" + strconv.Itoa(n)))
	frac := float64(h.Sum64()%10001)/10000*2 - 1 // [-1, 1]
	return base + time.Duration(float64(base)*Jitter*frac), true
}

// RetryAfter parses a Retry-After header (seconds or an HTTP date) relative
// to now, capped at MaxRetryAfter. It returns 0 when the header is missing
// or unusable.
func RetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, MaxRetryAfter)
}
