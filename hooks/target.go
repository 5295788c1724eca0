package hooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// Policy decides which hook targets, and which tenant-configured channel
// provider URLs, tocsin may connect to. Loopback,
// private, link-local, cloud metadata and other special-purpose addresses
// are refused unless an operator allows them by host name or CIDR
// (TOCSIN_HOOK_ALLOW_HOSTS); plain http is refused unless allowed
// (TOCSIN_HOOK_ALLOW_HTTP).
type Policy struct {
	AllowHTTP bool
	hosts     map[string]bool
	v4, v6    []netip.Prefix
	guard     *ssrf.Guardian
	resolver  *net.Resolver
}

// NewPolicy builds a policy from TOCSIN_HOOK_ALLOW_HOSTS and
// TOCSIN_HOOK_ALLOW_HTTP. allow holds IP addresses, CIDRs or host names;
// a name follows the rule of the hosts of hook targets and provider URLs
// (CheckHost) and is kept in the form CheckHost gives (an
// internationalized name in ASCII), so that it matches the hosts checked.
// An entry that is none of these is an error naming it.
func NewPolicy(allow []string, allowHTTP bool) (*Policy, error) {
	p := &Policy{AllowHTTP: allowHTTP, hosts: map[string]bool{}, resolver: net.DefaultResolver}
	for _, raw := range allow {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		var pfx netip.Prefix
		if v, err := netip.ParsePrefix(s); err == nil {
			pfx = v.Masked()
		} else if a, err := netip.ParseAddr(s); err == nil {
			pfx = netip.PrefixFrom(a, a.BitLen())
		} else {
			name, err := checkName(s)
			if err != nil {
				return nil, fmt.Errorf("TOCSIN_HOOK_ALLOW_HOSTS: %q is neither a host name, an address nor a CIDR: %w", s, err)
			}
			p.hosts[normalHost(name)] = true
			continue
		}
		if pfx.Addr().Is4() {
			p.v4 = append(p.v4, pfx)
		} else {
			p.v6 = append(p.v6, pfx)
		}
	}
	p.guard = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAllowedV4Prefixes(p.v4...), ssrf.WithAllowedV6Prefixes(p.v6...))
	return p, nil
}

func normalHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// hostAllowed reports whether the operator allowed host by name.
func (p *Policy) hostAllowed(host string) bool { return p.hosts[normalHost(host)] }

// ErrTarget is wrapped by every refusal of CheckURL; its message is meant
// for the API client.
var ErrTarget = errors.New("hook target refused")

// CheckURL parses a target URL and checks it against the policy, resolving
// the host name: it must resolve, and every address it resolves to must be
// allowed. A name that does not resolve and one that resolves to a
// refused address get one refusal (errNotPublic), so that a tenant cannot
// tell which internal names exist.
func (p *Policy) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	return p.check(ctx, raw, true)
}

// CheckProviderURL checks a channel provider's URL as CheckURL does, except
// that a host name is not resolved: the provider may not be reachable from
// here yet, and every connection is checked after resolution (see Client).
// What a name resolves to, or whether it resolves, never changes the
// answer, which would tell a tenant which internal names exist.
func (p *Policy) CheckProviderURL(ctx context.Context, raw string) (*url.URL, error) {
	return p.check(ctx, raw, false)
}

// errNotPublic refuses a host name that does not resolve or resolves to a
// refused address, without saying which.
func errNotPublic(host string) error {
	return fmt.Errorf("%w: the host %s does not resolve to a public address: check the name for a typo (a host of an internal network must be allowed by the operator in TOCSIN_HOOK_ALLOW_HOSTS)", ErrTarget, host)
}

func (p *Policy) check(ctx context.Context, raw string, resolve bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%w: not an absolute URL", ErrTarget)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !p.AllowHTTP {
			return nil, fmt.Errorf("%w: plain http is not allowed; use https", ErrTarget)
		}
	default:
		if p.AllowHTTP {
			return nil, fmt.Errorf("%w: the scheme must be https or http", ErrTarget)
		}
		return nil, fmt.Errorf("%w: the scheme must be https", ErrTarget)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: credentials in the URL are not allowed; use custom headers", ErrTarget)
	}
	host := u.Hostname()
	dialed, err := CheckHost(u)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTarget, err)
	}
	if !isASCII(host) {
		// An internationalized name, kept as the client dials it.
		u.Host = strings.Replace(u.Host, host, dialed, 1)
	}
	if p.hostAllowed(dialed) {
		return u, nil
	}
	name := normalHost(dialed)
	var addrs []netip.Addr
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// Loopback by definition (RFC 6761), whatever a resolver says:
		// allowed only where the operator allowed loopback.
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	} else if a, err := netip.ParseAddr(name); err == nil {
		addrs = []netip.Addr{a}
	} else if !resolve {
		return u, nil
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		addrs, err = p.resolver.LookupNetIP(rctx, "ip", dialed)
		if err != nil || len(addrs) == 0 {
			return nil, errNotPublic(host)
		}
		for _, a := range addrs {
			if p.guard.SafeAddr(a.Unmap()) != nil {
				return nil, errNotPublic(host)
			}
		}
		return u, nil
	}
	// The host is an address, or localhost, as the caller wrote it: the
	// refusal says so, and nothing of a resolver's answer.
	for _, a := range addrs {
		if err := p.guard.SafeAddr(a.Unmap()); err != nil {
			return nil, fmt.Errorf("%w: the host %s is not allowed: a loopback, private, link-local or otherwise reserved address", ErrTarget, host)
		}
	}
	return u, nil
}

// numericHost reports a host made only of numbers in decimal, octal or hex
// ("127.1", "0x7f000001", "2130706433", "0177.0.0.1"): some resolvers read
// such a name as an IP address, so it must not pass as a name that merely
// does not resolve here.
func numericHost(h string) bool {
	for part := range strings.SplitSeq(h, ".") {
		digits := part
		if len(part) > 1 && (part[:2] == "0x" || part[:2] == "0X") {
			digits = part[2:]
			if strings.Trim(digits, "0123456789abcdefABCDEF") != "" {
				return false
			}
			continue
		}
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return false
		}
	}
	return true
}

// Client returns an HTTP client for deliveries: it checks every connection's
// address after DNS resolution against the policy, follows no redirects,
// ignores proxy settings (a proxy would hide the real address) and gives up
// after timeout.
func (p *Policy) Client(timeout time.Duration) *http.Client {
	return p.client(timeout, 8)
}

// ProviderClient is Client for channel providers: the same guard, with a
// larger pool of keep-alive connections per host for fan-out.
func (p *Policy) ProviderClient(timeout time.Duration) *http.Client {
	return p.client(timeout, 128)
}

func (p *Policy) client(timeout time.Duration, perHost int) *http.Client {
	guarded := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.guard.Safe}
	named := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: tcpOnly}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err == nil && p.hostAllowed(host) {
				return named.DialContext(ctx, network, addr)
			}
			return guarded.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   perHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func tcpOnly(network, _ string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("%w: %s", ssrf.ErrProhibitedNetwork, network)
	}
	return nil
}
