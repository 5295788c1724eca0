package channels_test

import (
	"context"
	"sync"
	"testing"

	"github.com/tocsin/tocsin/channels"
)

func TestSendEachReportsEveryResult(t *testing.T) {
	var mu sync.Mutex
	reported := map[string]channels.Outcome{}
	ctx := channels.WithResults(context.Background(), func(r channels.Result) {
		mu.Lock()
		defer mu.Unlock()
		reported[r.Key] = r.Outcome
	})
	msgs := []channels.Message{{Key: "a"}, {Key: "b"}, {Key: "c"}}
	res := channels.SendEach(ctx, msgs, 2, func(_ context.Context, m channels.Message) channels.Result {
		if m.Key == "b" {
			return channels.Result{Key: m.Key, Outcome: channels.Failed}
		}
		return channels.Result{Key: m.Key, Outcome: channels.Sent}
	})
	if len(res) != 3 || len(reported) != 3 || reported["a"] != channels.Sent || reported["b"] != channels.Failed || reported["c"] != channels.Sent {
		t.Fatalf("results %+v, reported %v", res, reported)
	}
	// Without WithResults nothing is reported, and nothing fails.
	channels.Report(context.Background(), res[0])
}
