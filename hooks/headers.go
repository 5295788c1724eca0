package hooks

import (
	"fmt"
	"net/textproto"
	"strings"
)

// MaxHeaders is the most custom headers a subscription may carry.
const MaxHeaders = 20

// reserved are headers tocsin sets itself or that HTTP manages.
var reserved = map[string]bool{
	"Webhook-Id": true, "Webhook-Timestamp": true, "Webhook-Signature": true,
	"Content-Type": true, "Content-Length": true, "Content-Encoding": true, "Transfer-Encoding": true,
	"Host": true, "Connection": true, "Upgrade": true, "Te": true, "Trailer": true,
	"Keep-Alive": true, "Proxy-Authorization": true, "Proxy-Connection": true, "User-Agent": true, "Expect": true,
}

// CheckHeaders validates a subscription's custom headers and returns the
// name of the first bad one with the reason.
func CheckHeaders(h map[string]string) (string, error) {
	if len(h) > MaxHeaders {
		return "", fmt.Errorf("at most %d custom headers", MaxHeaders)
	}
	for name, value := range h {
		if name == "" || len(name) > 100 || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
			return name, fmt.Errorf("%q is not a valid header name", name)
		}
		if reserved[textproto.CanonicalMIMEHeaderKey(name)] {
			return name, fmt.Errorf("the header %s is set by tocsin and cannot be overridden", name)
		}
		if len(value) > 1000 || strings.ContainsAny(value, "\r\n\x00") {
			return name, fmt.Errorf("the value of %s must be at most 1000 characters on one line", name)
		}
	}
	return "", nil
}

func isTokenChar(r rune) bool {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}
