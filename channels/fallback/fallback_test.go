package fallback_test

import (
	"context"
	"net"
	"testing"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/fallback"
	"github.com/tocsin/tocsin/channels/providerhttp"
	"github.com/tocsin/tocsin/channels/push"
	"github.com/tocsin/tocsin/channels/push/pushtest"
	"github.com/tocsin/tocsin/channels/voice"
	"github.com/tocsin/tocsin/channels/voice/voicetest"
)

// TestFallbackProvider runs two loopback push services: the first refuses
// or is down, the second delivers.
func TestFallbackProvider(t *testing.T) {
	msgs := []channels.Message{{Key: "a", Tenant: "1", To: "tok-a", Text: "x"}, {Key: "b", Tenant: "1", To: "tok-b", Text: "x"}}
	cases := []struct {
		name      string
		prepare   func(first *pushtest.Server)
		secondGot int
	}{
		{"first refuses the credentials", func(f *pushtest.Server) { f.FailWith(403) }, 2},
		{"first is down", func(f *pushtest.Server) { f.FailWith(503) }, 2},
		{"first refuses one token", func(f *pushtest.Server) { f.Unregister("tok-b") }, 1},
		{"first delivers", func(*pushtest.Server) {}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first, second := pushtest.New(t, "one"), pushtest.New(t, "two")
			c.prepare(first)
			moved := sendAll(t, &push.Sender{Endpoint: providerhttp.Endpoint{URL: first.URL, Token: "one", Client: providerhttp.NewClient(0, 0)}},
				&push.Sender{Endpoint: providerhttp.Endpoint{URL: second.URL, Token: "two", Client: providerhttp.NewClient(0, 0)}}, msgs)
			if got := len(second.Received()); got != c.secondGot || moved != c.secondGot {
				t.Fatalf("second provider got %d (moved %d), want %d", got, moved, c.secondGot)
			}
			if len(first.Problems())+len(second.Problems()) != 0 {
				t.Fatalf("problems %v %v", first.Problems(), second.Problems())
			}
		})
	}
}

func TestBothDown(t *testing.T) {
	first, second := pushtest.New(t, "one"), pushtest.New(t, "two")
	first.FailWith(503)
	second.FailWith(502)
	s := fallback.New(&push.Sender{Endpoint: providerhttp.Endpoint{URL: first.URL, Token: "one", Client: providerhttp.NewClient(0, 0)}}, &push.Sender{Endpoint: providerhttp.Endpoint{URL: second.URL, Token: "two", Client: providerhttp.NewClient(0, 0)}})
	if _, err := s.Send(context.Background(), []channels.Message{{Key: "a", To: "t", Text: "x"}}); err == nil {
		t.Fatal("both providers down is a batch error")
	}
}

// sendAll sends msgs through primary with secondary as its fallback, fails
// the test unless every message is sent, and returns how many messages the
// fallback reported moving to secondary.
func sendAll(t *testing.T, primary, secondary channels.Sender, msgs []channels.Message) (moved int) {
	t.Helper()
	s := &fallback.Sender{Primary: primary, Secondary: secondary, OnFallback: func(n int) { moved += n }}
	res, err := s.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != channels.Sent {
			t.Fatalf("%+v", r)
		}
	}
	return moved
}

// closedURL is the address of a port nothing listens on any more.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

// TestFallbackWhenThePrimaryIsUnreachable: a primary on a closed port
// (connection refused) sends every message to the fallback, for senders
// that answer per batch (push) and per message (voice).
func TestFallbackWhenThePrimaryIsUnreachable(t *testing.T) {
	msgs := []channels.Message{{Key: "a", Tenant: "1", To: "+15550000001", Text: "x"}, {Key: "b", Tenant: "1", To: "+15550000002", Text: "x"}}
	t.Run("push", func(t *testing.T) {
		second := pushtest.New(t, "two")
		moved := sendAll(t, &push.Sender{Endpoint: providerhttp.Endpoint{URL: closedURL(t), Token: "one", Client: providerhttp.NewClient(0, 0)}},
			&push.Sender{Endpoint: providerhttp.Endpoint{URL: second.URL, Token: "two", Client: providerhttp.NewClient(0, 0)}}, msgs)
		if len(second.Received()) != 2 || moved != 2 {
			t.Fatalf("fallback got %d (moved %d)", len(second.Received()), moved)
		}
	})
	t.Run("voice", func(t *testing.T) {
		second := voicetest.New(t, "two", "secret")
		primaryOnly := &voice.Sender{Endpoint: providerhttp.Endpoint{URL: closedURL(t), Token: "one", Client: providerhttp.NewClient(0, 0)}, From: "+15550009999", CallbackURL: "http://127.0.0.1:1/cb"}
		alone, err := primaryOnly.Send(context.Background(), msgs[:1])
		if err != nil || alone[0].Outcome != channels.Failed || !alone[0].Unreachable || alone[0].Permanent {
			t.Fatalf("a closed port is an unreachable, temporary failure: %+v %v", alone, err)
		}
		moved := sendAll(t, &voice.Sender{Endpoint: providerhttp.Endpoint{URL: closedURL(t), Token: "one", Client: providerhttp.NewClient(0, 0)}, From: "+15550009999", CallbackURL: "http://127.0.0.1:1/cb"},
			&voice.Sender{Endpoint: providerhttp.Endpoint{URL: second.URL, Token: "two", Client: providerhttp.NewClient(0, 0)}, From: "+15550009999", CallbackURL: "http://127.0.0.1:1/cb"}, msgs)
		if len(second.Calls()) != 2 || moved != 2 {
			t.Fatalf("fallback placed %d calls (moved %d)", len(second.Calls()), moved)
		}
	})
}
