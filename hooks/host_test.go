package hooks_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/hooks"
)

// TestHostsMustBeAddressesOrNames: the host of a hook target or provider
// URL is an IP address or a DNS name of RFC 1123 labels, read by IDNA's
// lookup rules, whatever the policy allows; a refusal says what is wrong.
func TestHostsMustBeAddressesOrNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 63)
	refused := []struct{ url, says string }{
		{"https://./x", "not a name"},
		{"https://example.com../x", "empty label"},
		{"https://a..example.com/x", "empty label"},
		{"https://example.com:/x", "port"},
		{"https://[::1]:/x", "port"},
		{"https://example.com:0/x", "bad port"},
		{"https://example.com:65536/x", "bad port"},
		{"https://ｅxample.com/x", "reads as example.com"},
		{"https://foo。example/x", "reads as foo.example"},
		{"https://pаypal.example/x", "mixes scripts"}, // a Cyrillic а
		{"https://xn--pypal-4ve.example/x", "mixes scripts"},
		{"https://" + long + "b.example/x", "longer than 63"},
		{"https://" + strings.Repeat("aü", 30) + ".example/x", "longer than 63"}, // 67 bytes in ASCII
		{"https://" + strings.Repeat(long+".", 4) + "example/x", "longer than 253"},
		{"https://a*b.example/x", "other than letters"},
		{"https://bü*cher.example/x", "other than letters"},
		{"https://bü!cher.example/x", "other than letters"},
		{"https://bü=x.example/x", "other than letters"},
		{"https://b(ü).example/x", "other than letters"},
		{"https://-ab.example/x", "hyphen"},
		{"https://ab-.example/x", "hyphen"},
		{"https://-bü.example/x", "hyphen"},
		{"https://bü-.example/x", "hyphen"},
		{"https://xn--zz.example/x", "internationalized"},
		{"https://exa\u200dmple.example/x", "internationalized"},
		{"https://127.1/x", "other than the standard one"},
	}
	// A policy that allows everything by address and name: only the rule
	// on hosts refuses.
	loose, err := hooks.NewPolicy([]string{"0.0.0.0/0", "::/0", "a_b.example"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range refused {
		for name, check := range map[string]func(context.Context, string) (*url.URL, error){"target": loose.CheckURL, "provider": loose.CheckProviderURL} {
			_, err := check(context.Background(), c.url)
			if err == nil || !errors.Is(err, hooks.ErrTarget) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s %s: %v, want refused saying %q", name, c.url, err, c.says)
			}
		}
	}

	accepted := []struct{ url, dialed string }{
		{"https://example.com/x", "example.com"},
		{"https://Example.COM:8443/x", "example.com"},
		{"https://example.com./x", "example.com."},
		{"https://localhost:9/x", "localhost"},
		{"https://127.0.0.1:9/x", "127.0.0.1"},
		{"https://[::1]:9/x", "::1"},
		{"https://[2001:db8::1]/x", "2001:db8::1"},
		{"https://single/x", "single"},
		{"https://123.example/x", "123.example"},
		{"https://sms_gateway:8080/x", "sms_gateway"},
		{"https://r3---sn-abc.googlevideo.com/x", "r3---sn-abc.googlevideo.com"},
		{"https://ab--cd.example/x", "ab--cd.example"},
		{"https://_a.b_c.example/x", "_a.b_c.example"},
		{"https://bü_x.example/x", "xn--b_x-hoa.example"},
		{"https://" + long + "." + long + ".example/x", long + "." + long + ".example"},
		{"https://bücher.example/x", "xn--bcher-kva.example"},
		{"https://BÜCHER.example/x", "xn--bcher-kva.example"},
		{"https://xn--bcher-kva.example/x", "xn--bcher-kva.example"},
		{"https://пример.example/x", "xn--e1afmkfd.example"},
		{"https://例え.テスト/x", "xn--r8jz45g.xn--zckzah"},
	}
	for _, c := range accepted {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := hooks.CheckHost(u); err != nil || got != c.dialed {
			t.Errorf("%s: %q %v, want %q", c.url, got, err, c.dialed)
		}
		if _, err := loose.CheckProviderURL(context.Background(), c.url); err != nil {
			t.Errorf("provider %s: %v", c.url, err)
		}
	}
	// A target is kept as it is dialed: an internationalized name in its
	// ASCII form.
	u, err := loose.CheckProviderURL(context.Background(), "https://bücher.example:8443/in?x=1")
	if err != nil || u.String() != "https://xn--bcher-kva.example:8443/in?x=1" {
		t.Errorf("internationalized target kept as %v (%v)", u, err)
	}
}

// TestAllowedNamesAreReadAsHostsAre: a name the operator allows
// (TOCSIN_HOOK_ALLOW_HOSTS) is read by the rule of hosts, an underscore in
// an internationalized name included, so the target that writes it is
// allowed by name.
func TestAllowedNamesAreReadAsHostsAre(t *testing.T) {
	t.Parallel()
	p, err := hooks.NewPolicy([]string{"bü_x.internal", "sms_gateway"}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"http://bü_x.internal/in", "http://xn--b_x-hoa.internal/in", "http://SMS_gateway:8080/in"} {
		if _, err := p.CheckURL(context.Background(), raw); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// TestAllowListFollowsTheHostRule: an entry of TOCSIN_HOOK_ALLOW_HOSTS
// that is neither an address, a CIDR nor a name by the rule of hosts is
// refused, naming the variable and the entry; an internationalized name is
// kept in the ASCII form the targets that write it are checked in.
func TestAllowListFollowsTheHostRule(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"exa mple.com", "-bad-.com", "bad-.com", "ｅxample.com", "exаmple.com", "a..b", "127.1", "hooks.internal:8080", "10.0.0.0/33", "a/b"} {
		_, err := hooks.NewPolicy([]string{"hooks.internal", bad}, true)
		if err == nil || !strings.Contains(err.Error(), "TOCSIN_HOOK_ALLOW_HOSTS") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v, want refused naming TOCSIN_HOOK_ALLOW_HOSTS and the entry", bad, err)
		}
	}
	p, err := hooks.NewPolicy([]string{" 10.1.0.0/16", "192.168.1.7", "fd00::/8", "Bücher.Internal.", "sms_gateway", ""}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"http://bücher.internal/in", "http://xn--bcher-kva.internal/in", "http://192.168.1.7/in", "http://10.1.2.3/in", "http://[fd00::1]/in"} {
		if _, err := p.CheckURL(context.Background(), raw); err != nil {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
