package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// TestARequestThatCannotFinishIsAnswered503: a request whose work waits
// past TOCSIN_HTTP_REQUEST_TIMEOUT (here for a table another transaction
// holds locked, as it would for a connection of a busy pool) is answered
// a 503 problem then, not held open until the wait ends.
func TestARequestThatCannotFinishIsAnswered503(t *testing.T) {
	t.Parallel()
	const limit = time.Second
	s := stacktest.StartAPI(t, func(c *config.Config) { c.HTTPRequestTimeout = limit })
	_, tok := s.NewTenant(t)
	lock, err := storagetest.LockAddressPoints(context.Background(), s.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lock.Rollback() })
	// Without the bound the request waits for the lock: end it in time for
	// the test to say so.
	const held = 15 * time.Second
	time.AfterFunc(held, func() { _ = lock.Rollback() })
	began := time.Now()
	r := s.Do(t, http.MethodGet, "/v2/settings/etn/addressPointLists", tok, nil)
	took := time.Since(began)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Content-Type") != "application/problem+json" || took >= held {
		t.Fatalf("a request waiting on a lock: %d %s after %s", r.Status, r.Body, took)
	}
	// Once nothing holds it, the same request is answered.
	_ = lock.Rollback()
	if r := s.Do(t, http.MethodGet, "/v2/settings/etn/addressPointLists", tok, nil); r.Status != http.StatusOK {
		t.Fatalf("after the lock: %d %s", r.Status, r.Body)
	}
}
