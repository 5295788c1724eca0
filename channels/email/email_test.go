package email_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/channels"
	"github.com/tocsin/tocsin/channels/email"
	"github.com/tocsin/tocsin/channels/sandbox"
)

func startSandbox(t *testing.T) *sandbox.SMTPServer {
	t.Helper()
	s, err := sandbox.StartSMTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newSender(t *testing.T, addr string, mod ...func(*email.Config)) *email.Sender {
	t.Helper()
	cfg := email.Config{Addr: addr, From: "tocsin <alerts@tocsin.test>", TLS: email.TLSNone, Timeout: 10 * time.Second}
	for _, f := range mod {
		f(&cfg)
	}
	s, err := email.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBatchOverOneConnectionWithPerMessageResults(t *testing.T) {
	srv := startSandbox(t)
	srv.Reject("gone@example.com", 550)
	srv.Reject("busy@example.com", 451)
	s := newSender(t, srv.Addr())
	msgs := []channels.Message{
		{Key: "k1", Tenant: "1001", Channel: channels.Email, To: "ada@example.com", Subject: "Drill", Text: "This is a drill.",
			HTML:        "<p>This is a drill.</p>",
			Attachments: []channels.Attachment{{Name: "map.txt", ContentType: "text/csv", Data: []byte("a,b\n1,2\n")}}},
		{Key: "k2", Tenant: "1001", To: "gone@example.com", Subject: "Drill", Text: "x"},
		{Key: "k3", Tenant: "1001", To: "busy@example.com", Subject: "Drill", Text: "x"},
		{Key: "k4", Tenant: "1001", To: "not an address", Subject: "Drill", Text: "x"},
		{Key: "k5", Tenant: "1001", To: "Grace <grace@example.com>", Subject: "Code", Text: "Your code is 123456"},
	}
	res, err := s.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(msgs) {
		t.Fatalf("%d results for %d messages", len(res), len(msgs))
	}
	want := []struct {
		outcome   channels.Outcome
		permanent bool
	}{{channels.Sent, false}, {channels.Failed, true}, {channels.Failed, false}, {channels.Failed, true}, {channels.Sent, false}}
	for i, w := range want {
		if res[i].Key != msgs[i].Key || res[i].Outcome != w.outcome || res[i].Permanent != w.permanent {
			t.Errorf("message %d: %+v, want %v permanent=%v", i, res[i], w.outcome, w.permanent)
		}
	}
	if got := srv.Sessions(); got != 1 {
		t.Errorf("%d SMTP sessions for one batch, want 1", got)
	}
	got := srv.Messages()
	if len(got) != 2 {
		t.Fatalf("server received %d messages: %+v", len(got), got)
	}
	first := got[0]
	if first.To[0] != "ada@example.com" || first.Subject != "Drill" || !strings.Contains(first.Text, "This is a drill.") ||
		!strings.Contains(first.HTML, "<p>This is a drill.</p>") || first.HeaderFrom != "alerts@tocsin.test" {
		t.Errorf("first message: %+v", first)
	}
	if len(first.Attachments) != 1 || first.Attachments[0].Name != "map.txt" || string(first.Attachments[0].Data) != "a,b\n1,2\n" ||
		first.Attachments[0].ContentType != "text/csv" {
		t.Errorf("attachments: %+v", first.Attachments)
	}
	if first.MessageID != s.MessageID("k1") || res[0].ProviderMessageID != s.MessageID("k1") {
		t.Errorf("message id %q, result %q, want %q", first.MessageID, res[0].ProviderMessageID, s.MessageID("k1"))
	}
	if got[1].To[0] != "grace@example.com" {
		t.Errorf("second message to %v", got[1].To)
	}
}

func TestMessageIDIsStablePerKeyAndHidesIt(t *testing.T) {
	s := newSender(t, "127.0.0.1:25")
	a, b, c := s.MessageID("verify-1-2-x"), s.MessageID("verify-1-2-x"), s.MessageID("verify-1-2-y")
	if a != b || a == c {
		t.Fatalf("ids %q %q %q", a, b, c)
	}
	if strings.Contains(a, "verify") || !strings.HasSuffix(a, "@tocsin.test") {
		t.Fatalf("id %q", a)
	}
}

func TestUnreachableServerIsABatchError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := newSender(t, addr)
	res, err := s.Send(context.Background(), []channels.Message{{Key: "k", To: "a@example.com", Text: "x"}})
	if err == nil || res != nil {
		t.Fatalf("results %+v, err %v", res, err)
	}
}

func TestAuthenticates(t *testing.T) {
	srv := startSandbox(t)
	s := newSender(t, srv.Addr(), func(c *email.Config) { c.Username, c.Password = "user", "secret" })
	res, err := s.Send(context.Background(), []channels.Message{{Key: "k", To: "a@example.com", Subject: "s", Text: "x"}})
	if err != nil || res[0].Outcome != channels.Sent {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestConfigIsChecked(t *testing.T) {
	for _, c := range []email.Config{
		{Addr: "no-port", From: "a@b.c"},
		{Addr: "h:0", From: "a@b.c"},
		{Addr: "h:25", From: "not an address"},
		{Addr: "h:25", From: "a@b.c", TLS: "sometimes"},
	} {
		if _, err := email.New(c); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}

func TestReportsEachMessageAsItGoes(t *testing.T) {
	srv := startSandbox(t)
	srv.Reject("gone@example.com", 550)
	s := newSender(t, srv.Addr())
	msgs := []channels.Message{
		{Key: "k1", Tenant: "1001", To: "ada@example.com", Subject: "Drill", Text: "x"},
		{Key: "k2", Tenant: "1001", To: "gone@example.com", Subject: "Drill", Text: "x"},
		{Key: "k3", Tenant: "1001", To: "grace@example.com", Subject: "Drill", Text: "x"},
	}
	var reported []channels.Result
	var received []int
	ctx := channels.WithResults(context.Background(), func(r channels.Result) {
		reported = append(reported, r)
		received = append(received, len(srv.Messages()))
	})
	res, err := s.Send(ctx, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != len(res) {
		t.Fatalf("reported %+v, results %+v", reported, res)
	}
	for i := range res {
		if reported[i] != res[i] {
			t.Errorf("reported %+v, result %+v", reported[i], res[i])
		}
	}
	// Each message is reported once the server has it, before the next.
	if received[0] != 1 || received[2] != 2 {
		t.Errorf("the server had %v messages at each report", received)
	}
}

// TestSenderNameAndReplyTo: an alert's email shows its sender's name with
// the configured address, whatever the name holds (quotes, commas, angle
// brackets, non-ASCII letters, line breaks that would start a header of
// their own), and carries its Reply-To; a message without options keeps
// the configured sender and has no Reply-To.
func TestSenderNameAndReplyTo(t *testing.T) {
	srv := startSandbox(t)
	s := newSender(t, srv.Addr())
	names := []string{
		"Campus Safety",
		`Safety "Team", Ops <evil@attacker.example>`,
		"Sécurité du campus — Zoë 😀",
		"Campus\r\nBcc: victim@example.com\r\nX-Injected: yes",
		"Campus\nBcc: victim@example.com",
		"=?utf-8?q?Forged?= <forged@attacker.example>",
	}
	var msgs []channels.Message
	for i, n := range names {
		msgs = append(msgs, channels.Message{Key: "n" + string(rune('a'+i)), Tenant: "1001", To: "ada@example.com", Subject: "Drill", Text: "x",
			Options: email.Options{FromName: n, ReplyTo: "safety@example.com"}})
	}
	msgs = append(msgs, channels.Message{Key: "plain", Tenant: "1001", To: "ada@example.com", Subject: "Code", Text: "x"})
	res, err := s.Send(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != channels.Sent {
			t.Fatalf("%+v", r)
		}
	}
	got := srv.Messages()
	if len(got) != len(msgs) {
		t.Fatalf("%d messages received, want %d", len(got), len(msgs))
	}
	for i, m := range got {
		wantName, wantReply := "tocsin", []string{"safety@example.com"}
		if i < len(names) {
			wantName = names[i]
		} else {
			wantReply = nil
		}
		if m.HeaderFrom != "alerts@tocsin.test" || m.FromName != wantName || len(m.Headers["From"]) != 1 {
			t.Errorf("message %d: From %q <%s> (%q), want %q <alerts@tocsin.test>", i, m.FromName, m.HeaderFrom, m.Headers["From"], wantName)
		}
		if strings.Join(m.ReplyTo, ",") != strings.Join(wantReply, ",") {
			t.Errorf("message %d: Reply-To %v, want %v", i, m.ReplyTo, wantReply)
		}
		if len(m.To) != 1 || m.Headers["Bcc"] != nil || m.Headers["X-Injected"] != nil {
			t.Errorf("message %d: a name added a recipient or a header: to %v, headers %v", i, m.To, m.Headers)
		}
	}
}

// TestBadReplyToFailsTheMessage: a Reply-To that is no address fails its
// message for good, naming it, and the others go.
func TestBadReplyToFailsTheMessage(t *testing.T) {
	srv := startSandbox(t)
	s := newSender(t, srv.Addr())
	res, err := s.Send(context.Background(), []channels.Message{
		{Key: "bad", To: "ada@example.com", Subject: "x", Text: "x", Options: email.Options{ReplyTo: "not an address"}},
		{Key: "ok", To: "ada@example.com", Subject: "x", Text: "x", Options: email.Options{ReplyTo: "desk@example.com"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Outcome != channels.Failed || !res[0].Permanent || !strings.Contains(res[0].Error, "reply-to") || res[1].Outcome != channels.Sent {
		t.Fatalf("%+v", res)
	}
}

// batchOf is n messages to distinct addresses.
func batchOf(n int) []channels.Message {
	msgs := make([]channels.Message, n)
	for i := range msgs {
		msgs[i] = channels.Message{Key: fmt.Sprintf("k%d", i), Tenant: "1001", To: fmt.Sprintf("r%d@example.com", i), Subject: "Drill", Text: "x"}
	}
	return msgs
}

// checkEachSentOnce checks that every message of a batch of n was sent and
// reached the server once.
func checkEachSentOnce(t *testing.T, srv *sandbox.SMTPServer, res []channels.Result, n int) {
	t.Helper()
	for _, r := range res {
		if r.Outcome != channels.Sent {
			t.Errorf("%s: %+v", r.Key, r)
		}
	}
	got := map[string]int{}
	for _, m := range srv.Messages() {
		got[strings.Join(m.To, ",")]++
	}
	for i := range n {
		if to := fmt.Sprintf("r%d@example.com", i); got[to] != 1 {
			t.Errorf("%s got %d emails", to, got[to])
		}
	}
}

// TestBatchSendsOverSeveralConnections: a batch goes over up to
// Config.Connections SMTP sessions at once, each message once, so that one
// server reply at a time does not pace a whole Emergency batch; a small
// batch keeps one.
func TestBatchSendsOverSeveralConnections(t *testing.T) {
	srv := startSandbox(t)
	s := newSender(t, srv.Addr(), func(c *email.Config) { c.Connections = 4 })
	res, err := s.Send(context.Background(), batchOf(40))
	if err != nil || len(res) != 40 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	checkEachSentOnce(t, srv, res, 40)
	if n := srv.Sessions(); n != 4 {
		t.Errorf("40 messages over %d sessions, want 4", n)
	}
	before := srv.Sessions()
	if _, err := s.Send(context.Background(), batchOf(5)); err != nil {
		t.Fatal(err)
	}
	if n := srv.Sessions() - before; n != 1 {
		t.Errorf("5 messages over %d sessions, want 1", n)
	}
}

// TestConnectionsTheServerRefusesLeaveTheirShare: a server that takes one
// connection at a time (a proxy closes every other at once) still gets the
// whole batch, over the connection it took.
func TestConnectionsTheServerRefusesLeaveTheirShare(t *testing.T) {
	srv := startSandbox(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var open atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if open.Add(1) > 1 {
				open.Add(-1)
				_ = c.Close()
				continue
			}
			go func() {
				defer open.Add(-1)
				up, err := net.Dial("tcp", srv.Addr())
				if err != nil {
					_ = c.Close()
					return
				}
				go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
				_, _ = io.Copy(c, up)
				_ = c.Close()
			}()
		}
	}()
	s := newSender(t, ln.Addr().String(), func(c *email.Config) { c.Connections = 4 })
	res, err := s.Send(context.Background(), batchOf(30))
	if err != nil || len(res) != 30 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	checkEachSentOnce(t, srv, res, 30)
}
