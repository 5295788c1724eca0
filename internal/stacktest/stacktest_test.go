package stacktest_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// TestStackSendsEmailAndTextsToItsOwnSandbox: a stack started without
// configuration of its own sends texts and email to a loopback sandbox it
// started, never to the default addresses, where nothing listens in tests.
func TestStackSendsEmailAndTextsToItsOwnSandbox(t *testing.T) {
	t.Parallel()
	s := stacktest.StartAPI(t)
	req, err := http.NewRequest(http.MethodPost, s.Config.SMSURL, strings.NewReader(`{"to":"+15551230000","body":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Config.SMSToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the stack's SMS URL %s: %v", s.Config.SMSURL, err)
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("the stack's SMS URL %s answered %d", s.Config.SMSURL, res.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Sandbox.SMS.WaitTo(ctx, "+15551230000"); err != nil {
		t.Fatalf("the text did not reach the stack's sandbox: %v", err)
	}
	c, err := net.DialTimeout("tcp", s.Config.SMTPAddr, 5*time.Second)
	if err != nil {
		t.Fatalf("the stack's SMTP server %s: %v", s.Config.SMTPAddr, err)
	}
	c.Close()

	// A test's own configuration still wins.
	sb, withSandbox := stacktest.Sandbox(t)
	if own := stacktest.StartAPI(t, withSandbox); own.Config.SMSURL != sb.SMS.URL() || own.Config.SMTPAddr != sb.SMTP.Addr() {
		t.Fatalf("configured %s and %s, want the test's sandbox", own.Config.SMSURL, own.Config.SMTPAddr)
	}
}
