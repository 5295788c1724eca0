package hooks

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// SameDestination reports whether the URLs a and b reach the same receiver:
// the same origin (scheme, host and port, the default port of the scheme
// written or not), the same path (trailing slashes aside) and the same
// query parameters (in any order). The fragment does not count. Hosts are
// compared as the HTTP client dials them: an internationalized name in its
// ASCII form (so STRAẞE.de, which goes to strasse.de, is not straße.de),
// then case-insensitively; a trailing dot counts, as it changes how a
// single-label name resolves.
//
// A masked secret sent back keeps its stored value only while the URL the
// secret is sent to keeps its destination: otherwise whoever may change a
// setting, without reading its secrets, could send them to a receiver of
// their choosing. The path and the query count too because one host often
// serves many receivers told apart by path or by a parameter (shared
// webhook collectors, API gateways, buckets), so changing either can reach
// someone else.
func SameDestination(a, b string) bool {
	da, ok := destination(a)
	if !ok {
		return false
	}
	db, ok := destination(b)
	return ok && da == db
}

// destination is the receiver raw names, in one spelling.
func destination(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	host, err := idna.Lookup.ToASCII(u.Hostname())
	if err != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + strings.ToLower(host) + ":" + port +
		strings.TrimRight(u.EscapedPath(), "/") + "?" + u.Query().Encode(), true
}
