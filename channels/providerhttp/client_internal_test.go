package providerhttp

import (
	"net/http"
	"testing"
	"time"
)

// TestDefaultTimeout checks the timeout a provider's answer gets when none
// is configured, which the client keeps in its transport rather than in
// http.Client.Timeout.
func TestDefaultTimeout(t *testing.T) {
	for name, cl := range map[string]*http.Client{
		"NewClient":         NewClient(0, 4),
		"NewClient, no cap": NewClient(0, 0),
	} {
		st, ok := cl.Transport.(*slotted)
		if !ok {
			t.Fatalf("%s: transport %T, want the slotted one", name, cl.Transport)
		}
		if st.timeout != 15*time.Second {
			t.Errorf("%s: timeout %s, want 15s", name, st.timeout)
		}
	}
	if st := NewClient(250*time.Millisecond, 0).Transport.(*slotted); st.timeout != 250*time.Millisecond {
		t.Errorf("NewClient(250ms): timeout %s", st.timeout)
	}
}
