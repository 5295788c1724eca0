package stacktest

import (
	"context"
	"net"
	"os"
	"testing"
	"time"
)

// InternalName is a host name that resolves here, and only to loopback or
// private addresses, as the names of an internal network do: the
// machine's own name, which /etc/hosts gives on nearly every system. The
// test is skipped where it resolves otherwise.
func InternalName(t testing.TB) string {
	t.Helper()
	name, err := os.Hostname()
	if err != nil {
		t.Skipf("no host name: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", name)
	if err != nil || len(addrs) == 0 {
		t.Skipf("the host name %s does not resolve here: %v", name, err)
	}
	for _, a := range addrs {
		if a = a.Unmap(); !a.IsLoopback() && !a.IsPrivate() {
			t.Skipf("the host name %s resolves to %s, not only to internal addresses", name, a)
		}
	}
	return name
}
