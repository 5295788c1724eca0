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
	s := ratelimit.New(rec, 1000, 4)
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
	if s := ratelimit.New(rec, 0, 0); s != channels.Sender(rec) {
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
