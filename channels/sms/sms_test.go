package sms_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/sandbox"
	"github.com/tocsin/tocsin/channels/sms"
)

func TestBatchThroughTheSandboxEndpoint(t *testing.T) {
	srv, err := sandbox.StartSMS("127.0.0.1:0", "/v1/messages", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.Respond("+15550000400", http.StatusBadRequest)
	srv.Respond("+15550000429", http.StatusTooManyRequests)
	srv.Respond("+15550000500", http.StatusInternalServerError)
	srv.Respond("+15550000408", http.StatusRequestTimeout)

	s, err := sms.New(sms.Config{URL: srv.URL(), Token: "s3cret", Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []channels.Message{
		{Key: "k1", Tenant: "1001", To: "+15551230001", Text: "Your code is 123456"},
		{Key: "k2", Tenant: "1001", To: "+15550000400", Text: "x"},
		{Key: "k3", Tenant: "1001", To: "+15550000429", Text: "x"},
		{Key: "k4", Tenant: "1001", To: "+15550000500", Text: "x"},
		{Key: "k5", Tenant: "1001", To: "", Text: "x"},
		{Key: "k6", Tenant: "1002", To: "+15551230002", Subject: "only a subject"},
		{Key: "k7", Tenant: "1001", To: "+15550000408", Text: "x"},
		{Key: "k8", Tenant: "1001", To: "+15551230008", Text: "From the county", Options: sms.Options{From: "+15550100"}},
	}
	res, err := s.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		outcome   channels.Outcome
		permanent bool
	}{{channels.Sent, false}, {channels.Failed, true}, {channels.Failed, false}, {channels.Failed, false}, {channels.Failed, true}, {channels.Sent, false}, {channels.Failed, true}, {channels.Sent, false}}
	for i, w := range want {
		if res[i].Key != msgs[i].Key || res[i].Outcome != w.outcome || res[i].Permanent != w.permanent {
			t.Errorf("message %d: %+v, want %v permanent=%v", i, res[i], w.outcome, w.permanent)
		}
	}
	got, err := srv.WaitTo(context.Background(), "+15551230001")
	if err != nil {
		t.Fatal(err)
	}
	if got.Body != "Your code is 123456" || got.IdempotencyKey != "k1" || got.Tenant != "1001" || got.ID != res[0].ProviderMessageID || got.From != "" {
		t.Fatalf("received %+v, result %+v", got, res[0])
	}
	// A message with a number to send from asks for it.
	if got, err := srv.WaitTo(context.Background(), "+15551230008"); err != nil || got.From != "+15550100" {
		t.Fatalf("received %+v %v, want from +15550100", got, err)
	}
	// A retry with the same key is answered with the same id and not delivered twice.
	again, err := s.Send(context.Background(), msgs[:1])
	if err != nil || again[0].ProviderMessageID != res[0].ProviderMessageID {
		t.Fatalf("retry: %+v %v", again, err)
	}
	if n := len(srv.Messages()); n != 3 {
		t.Fatalf("%d messages stored, want 3", n)
	}

	// A wrong token is a permanent refusal.
	bad, _ := sms.New(sms.Config{URL: srv.URL(), Token: "wrong"})
	res, err = bad.Send(context.Background(), msgs[:1])
	if err != nil || res[0].Outcome != channels.Failed || !res[0].Permanent {
		t.Fatalf("wrong token: %+v %v", res, err)
	}
}

func TestProtocolAndBoundedConcurrency(t *testing.T) {
	var inFlight, peak atomic.Int64
	var mu sync.Mutex
	seen := map[string]bool{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		var in sms.Request
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.Header.Get("Authorization") != "Bearer tok" ||
			r.Header.Get("Idempotency-Key") != in.IdempotencyKey || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		seen[in.IdempotencyKey] = true
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		_ = json.NewEncoder(w).Encode(sms.Response{ID: "id-" + in.IdempotencyKey})
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, err := sms.New(sms.Config{URL: srv.URL, Token: "tok", Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []channels.Message
	for i := range 12 {
		msgs = append(msgs, channels.Message{Key: string(rune('a' + i)), To: "+15551230000", Text: "hi"})
	}
	res, err := s.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Outcome != channels.Sent || r.ProviderMessageID != "id-"+msgs[i].Key {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if p := peak.Load(); p > 3 {
		t.Fatalf("%d requests in flight, bound is 3", p)
	}
	if len(seen) != 12 {
		t.Fatalf("provider saw %d keys", len(seen))
	}
}

// TestUnreadableAnswerIsSent: a message the provider accepted is sent even
// when its answer cannot be read; it has no provider id then.
func TestUnreadableAnswerIsSent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte("queued"))
	}))
	defer srv.Close()
	s, err := sms.New(sms.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Send(context.Background(), []channels.Message{{Key: "k", To: "+15551230000", Text: "x"}})
	if err != nil || res[0].Outcome != channels.Sent || res[0].ProviderMessageID != "" {
		t.Fatalf("%+v %v", res, err)
	}
}

// TestAnswerCutShort: an answer whose body breaks off is read by its
// status. A 2xx means the provider has the text, so it is sent and not
// sent again by a retry; a 4xx is still a permanent failure.
func TestAnswerCutShort(t *testing.T) {
	for _, c := range []struct {
		status    int
		outcome   channels.Outcome
		permanent bool
	}{{http.StatusAccepted, channels.Sent, false}, {http.StatusBadRequest, channels.Failed, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Promise 100 bytes, send 10, then drop the connection.
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(`{"id":"sm`))
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}))
		s, err := sms.New(sms.Config{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Send(context.Background(), []channels.Message{{Key: "k", To: "+15551230000", Text: "x"}})
		srv.Close()
		if err != nil || len(res) != 1 || res[0].Outcome != c.outcome || res[0].Permanent != c.permanent {
			t.Fatalf("status %d: %+v %v", c.status, res, err)
		}
	}
}

func TestUnreachableProviderIsABatchError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s, err := sms.New(sms.Config{URL: "http://" + addr + "/messages", Token: "secret-token"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Send(context.Background(), []channels.Message{{Key: "k", To: "+15551230000", Text: "x"}})
	if err == nil || res != nil {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestConfigIsChecked(t *testing.T) {
	for _, u := range []string{"", "ftp://x/y", "http://", "::"} {
		if _, err := sms.New(sms.Config{URL: u}); err == nil {
			t.Errorf("accepted %q", u)
		}
	}
}

// A refused provider URL is logged when the text channel is disabled: its
// error names the setting, not the URL, which may carry the provider's
// key in its query or user information.
func TestRefusedURLIsNotQuoted(t *testing.T) {
	for _, u := range []string{"sms.example/send?api_key=s3cr3t", "ftp://user:s3cr3t@sms.example/send", "https://user:s3cr3t@/send?key=s3cr3t"} {
		_, err := sms.New(sms.Config{URL: u})
		if err == nil {
			t.Fatalf("accepted %q", u)
		}
		if strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "TOCSIN_SMS_URL") {
			t.Errorf("%q: %v", u, err)
		}
	}
}

// TestParallelBatchesDoNotTimeOutWaitingForAConnection: batches sent side
// by side share the sender's Concurrency connections; a text waiting for
// one is not timed, so against a provider that answers within the timeout
// every text of every batch is sent, however long it waited.
func TestParallelBatchesDoNotTimeOutWaitingForAConnection(t *testing.T) {
	var inFlight, peak atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		var in sms.Request
		_ = json.NewDecoder(r.Body).Decode(&in)
		// Well within the timeout, while the last of the eight texts on a
		// connection waits longer than the timeout for its turn.
		time.Sleep(400 * time.Millisecond)
		_ = json.NewEncoder(w).Encode(sms.Response{ID: "id-" + in.IdempotencyKey})
	}))
	defer srv.Close()
	s, err := sms.New(sms.Config{URL: srv.URL, Concurrency: 2, Timeout: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([][]channels.Result, 4)
	for b := range results {
		msgs := make([]channels.Message, 4)
		for i := range msgs {
			msgs[i] = channels.Message{Key: fmt.Sprintf("b%d-%d", b, i), To: "+15551230000", Text: "hi"}
		}
		wg.Go(func() {
			res, err := s.Send(context.Background(), msgs)
			if err != nil {
				t.Errorf("batch %d: %v", b, err)
			}
			results[b] = res
		})
	}
	wg.Wait()
	for b, res := range results {
		for _, r := range res {
			if r.Outcome != channels.Sent || r.ProviderMessageID != "id-"+r.Key {
				t.Errorf("batch %d: %+v", b, r)
			}
		}
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d requests in flight, bound is 2", p)
	}
}

// TestSlowProviderTimesOut: a provider that does not answer within the
// timeout has not taken the texts; the batch is an error to retry.
func TestSlowProviderTimesOut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end, so the server notices when the client leaves.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	s, err := sms.New(sms.Config{URL: srv.URL, Concurrency: 1, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Send(context.Background(), []channels.Message{{Key: "a", To: "+15551230000", Text: "x"}, {Key: "b", To: "+15551230000", Text: "x"}})
	if err == nil || !strings.Contains(err.Error(), "timed out") || res != nil {
		t.Fatalf("%+v %v, want a batch error that says it timed out", res, err)
	}
}
