package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/sandbox"
)

// TestHeldEmailsAreRefusedWhenReleased: after HoldAfter(n) the server
// takes n messages and holds the next without an answer; released, it
// refuses that one for now, keeps none of what it held, and takes what
// comes after.
func TestHeldEmailsAreRefusedWhenReleased(t *testing.T) {
	srv, err := sandbox.StartSMTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	es, err := email.New(email.Config{Addr: srv.Addr(), From: "alerts@tocsin.test", TLS: email.TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs := []channels.Message{
		{Key: "k1", To: "one@example.com", Subject: "S", Text: "1"},
		{Key: "k2", To: "two@example.com", Subject: "S", Text: "2"},
		{Key: "k3", To: "three@example.com", Subject: "S", Text: "3"},
	}
	release := srv.HoldAfter(1)
	reported := make(chan channels.Result, len(msgs))
	done := make(chan []channels.Result, 1)
	go func() {
		res, _ := es.Send(channels.WithResults(ctx, func(r channels.Result) { reported <- r }), msgs[:2])
		done <- res
	}()
	if r := <-reported; r.Key != "k1" || r.Outcome != channels.Sent {
		t.Fatalf("the first message: %+v", r)
	}
	select {
	case r := <-reported:
		t.Fatalf("a held message was answered: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	res := <-done
	if res[1].Outcome != channels.Failed || res[1].Permanent {
		t.Fatalf("the held message: %+v", res[1])
	}
	if res, err := es.Send(ctx, msgs[2:]); err != nil || res[0].Outcome != channels.Sent {
		t.Fatalf("after the release: %+v %v", res, err)
	}
	got := srv.Messages()
	if len(got) != 2 || got[0].To[0] != "one@example.com" || got[1].To[0] != "three@example.com" {
		t.Fatalf("kept %+v", got)
	}
}
