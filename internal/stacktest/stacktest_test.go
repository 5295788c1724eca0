package stacktest

import (
	"net"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/config"
)

// TestStackSendsNoMessageToTheDefaultProviders checks that a stack started
// without a provider of its own sends email and texts where nothing listens,
// not to the default SMTP server and text endpoint, where `make run`'s
// sandbox (or a developer's mail catcher) receives them while tests run
// beside it.
func TestStackSendsNoMessageToTheDefaultProviders(t *testing.T) {
	s := StartAPI(t)
	defaults, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Config.SMTPAddr == defaults.SMTPAddr {
		t.Errorf("the stack sends email to the default %s", defaults.SMTPAddr)
	}
	if s.Config.SMSURL == defaults.SMSURL {
		t.Errorf("the stack sends texts to the default %s", defaults.SMSURL)
	}
	if c, err := net.DialTimeout("tcp", s.Config.SMTPAddr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("something answers at the stack's SMTP address %s", s.Config.SMTPAddr)
	}
}
