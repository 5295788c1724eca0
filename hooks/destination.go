package hooks

import (
	"net/url"
	"strings"
)

// SameDestination reports whether the URLs a and b reach the same receiver:
// the same origin (scheme, host and port, the default port of the scheme
// written or not, host names compared case-insensitively) and the same
// path (trailing slashes aside). The query and the fragment do not count.
//
// A masked secret sent back keeps its stored value only while the URL the
// secret is sent to keeps its destination: otherwise whoever may change a
// setting, without reading its secrets, could send them to a host of their
// choosing. The path counts too because one host often serves many
// receivers told apart by path (shared webhook collectors, API gateways),
// so a new path on the same host can reach someone else.
func SameDestination(a, b string) bool {
	pa, err := url.Parse(a)
	if err != nil || pa.Host == "" {
		return false
	}
	pb, err := url.Parse(b)
	if err != nil || pb.Host == "" {
		return false
	}
	return origin(pa) == origin(pb) &&
		strings.TrimRight(pa.EscapedPath(), "/") == strings.TrimRight(pb.EscapedPath(), "/")
}

// origin is u's scheme, host and port, the port always written.
func origin(u *url.URL) string {
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
	return scheme + "://" + normalHost(u.Hostname()) + ":" + port
}
