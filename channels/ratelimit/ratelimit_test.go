package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/ratelimit"
)

type recorder struct{ batches []int }

func (r *recorder) Send(_ context.Context, msgs []channels.Message) ([]channels.Result, error) {
	r.batches = append(r.batches, len(msgs))
	out := make([]channels.Result, len(msgs))
	for i, m := range msgs {
		out[i] = channels.Result{Key: m.Key, Outcome: channels.Sent}
	}
	return out, nil
}

func msgs(n int) []channels.Message {
	out := make([]channels.Message, n)
	for i := range out {
		out[i].Key = fmt.Sprint(i)
	}
	return out
}

func TestPiecesOfBurst(t *testing.T) {
	rec := &recorder{}
	s := (*ratelimit.Limiters)(nil).Wrap("t|text", rec, 1000, 4)
	res, err := s.Send(context.Background(), msgs(10))
	if err != nil || len(res) != 10 || res[9].Key != "9" {
		t.Fatalf("%v %v", res, err)
	}
	if fmt.Sprint(rec.batches) != "[4 4 2]" {
		t.Fatalf("pieces %v", rec.batches)
	}
}

func TestNoLimitIsPassThrough(t *testing.T) {
	rec := &recorder{}
	if s := new(ratelimit.Limiters).Wrap("t|text", rec, 0, 0); s != channels.Sender(rec) {
		t.Fatal("a zero rate should not wrap")
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	rec := &recorder{}
	s := &ratelimit.Sender{Next: rec, Limiter: rate.NewLimiter(rate.Every(time.Hour), 2)}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := s.Send(ctx, msgs(4))
	if err != nil {
		t.Fatal(err)
	}
	// The first piece uses the burst; the second cannot get tokens in time.
	if res[0].Outcome != channels.Sent || res[1].Outcome != channels.Sent || res[2].Outcome != channels.Failed || res[3].Permanent {
		t.Fatalf("%+v", res)
	}
}

// Senders wrapped under one key share one bucket, so two lanes that build
// their own Senders of a tenant's channel hold it to one rate together; a
// changed rate gets a new bucket.
func TestSendersOfOneKeyShareTheirBucket(t *testing.T) {
	var l ratelimit.Limiters
	a := l.Wrap("1001|voice", &recorder{}, 1, 1).(*ratelimit.Sender)
	b := l.Wrap("1001|voice", &recorder{}, 1, 1).(*ratelimit.Sender)
	other := l.Wrap("1002|voice", &recorder{}, 1, 1).(*ratelimit.Sender)
	if a.Limiter != b.Limiter || a.Limiter == other.Limiter {
		t.Fatal("a key's senders do not share one bucket, or two keys share one")
	}
	if c := l.Wrap("1001|voice", &recorder{}, 5, 5).(*ratelimit.Sender); c.Limiter == a.Limiter || c.Limiter.Limit() != 5 {
		t.Fatal("a changed rate kept the old bucket")
	}
}
