package hooks

import (
	"net/url"
	"strings"
)

// SameDestination reports whether the URLs a and b reach the same receiver:
// the same origin (scheme, host and port, the default port of the scheme
// written or not), the same path (trailing slashes aside) and the same
// query parameters (in any order). The fragment does not count. Hosts are
// compared as the HTTP client dials them: an internationalized name in its
// ASCII form by the lookup rules CheckHost reads hosts with, underscores
// allowed (so STRAẞE.de, which goes to strasse.de, is not straße.de, and
// sms_gateway is itself), then case-insensitively; a trailing dot counts, as it changes how a
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
	return DestinationChange(a, b) == ""
}

// DestinationChange names the parts of the destination (SameDestination)
// in which b differs from a, in the words of a sentence: "query", "host
// and port", "scheme, host and port"; "" when both reach the same
// receiver. A URL that names no receiver (not a URL, or no host) differs
// in every part.
func DestinationChange(a, b string) string {
	da, okA := destination(a)
	db, okB := destination(b)
	var changed []string
	for i, name := range []string{"scheme", "host", "port", "path", "query"} {
		if !okA || !okB || da[i] != db[i] {
			changed = append(changed, name)
		}
	}
	switch n := len(changed); n {
	case 0:
		return ""
	case 1:
		return changed[0]
	default:
		return strings.Join(changed[:n-1], ", ") + " and " + changed[n-1]
	}
}

// destination is the receiver raw names, in one spelling: its scheme,
// host, port, path and query.
func destination(raw string) ([5]string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return [5]string{}, false
	}
	host, err := lookup.ToASCII(u.Hostname())
	if err != nil {
		return [5]string{}, false
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
	return [5]string{scheme, strings.ToLower(host), port, strings.TrimRight(u.EscapedPath(), "/"), u.Query().Encode()}, true
}
