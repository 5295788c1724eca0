package voice

import (
	"errors"
	"testing"
	"time"
)

// TestVerifyWorkDoesNotTellTheSecrets: Verify computes as many HMACs for a
// tenant without secrets, with an empty one, with one or with two, so that
// its time tells an unsigned caller nothing of the channel's settings; the
// dummy secret standing in for the missing ones verifies nothing.
func TestVerifyWorkDoesNotTellTheSecrets(t *testing.T) {
	now := time.Now()
	body := []byte(`{"callId":"a"}`)
	for _, c := range []struct {
		name    string
		secrets []string
		signer  string
		want    error
	}{
		{"none", nil, "primary-secret", ErrSignature},
		{"empty", []string{""}, "", ErrSignature},
		{"empty primary, fallback", []string{"", "fallback-secret"}, "fallback-secret", nil},
		{"one", []string{"primary-secret"}, "primary-secret", nil},
		{"one, forged", []string{"primary-secret"}, "someone-else", ErrSignature},
		{"two", []string{"primary-secret", "fallback-secret"}, "fallback-secret", nil},
		{"two, forged", []string{"primary-secret", "fallback-secret"}, "someone-else", ErrSignature},
		{"signed with the dummy secret", []string{"primary-secret"}, dummySecret, ErrSignature},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			counted := func(secret, ts string, body []byte) string {
				n++
				return mac(secret, ts, body)
			}
			err := verify(counted, c.secrets, Sign(c.signer, body, now), body, now)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("verify: %v, want %v", err, c.want)
			}
			if n != macsPerVerify {
				t.Fatalf("%d HMACs computed, want %d whatever the secrets", n, macsPerVerify)
			}
		})
	}
}
