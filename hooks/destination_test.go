package hooks_test

import (
	"testing"

	"github.com/tocsin/tocsin/hooks"
)

func TestSameDestination(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"https://h.example/in", "https://h.example/in", true},
		{"https://h.example/in?b=2&a=1", "https://H.example:443/in/?a=1&b=2#f", true},
		{"https://h.example/in?bucket=mine", "https://h.example/in?bucket=theirs", false},
		{"https://h.example/in", "https://h.example/in?q=1", false},
		{"https://straße.de/in", "https://STRAẞE.de/in", false},
		{"https://intranet/in", "https://intranet./in", false},
		{"http://sms_gateway:8080/in", "http://SMS_Gateway:8080/in", true},
		{"http://sms_gateway:8080/in", "http://sms-gateway:8080/in", false},
		{"https://bü_x.example/in", "https://xn--b_x-hoa.example/in", true},
		{"http://h.example", "http://h.example:80/", true},
		{"https://h.example/in", "https://8.8.4.4/in", false},
		{"https://h.example/in", "https://h.example:8443/in", false},
		{"https://h.example/in", "http://h.example/in", false},
		{"https://h.example/in", "https://h.example/other", false},
		{"https://h.example/a/b", "https://h.example/a%2Fb", false},
		{"https://h.example/in", "", false},
		{"", "", false},
		{"https://h.example/in", "://bad", false},
	} {
		if got := hooks.SameDestination(c.a, c.b); got != c.want {
			t.Errorf("SameDestination(%q, %q) = %v", c.a, c.b, got)
		}
		if got := hooks.SameDestination(c.b, c.a); got != c.want {
			t.Errorf("SameDestination(%q, %q) = %v", c.b, c.a, got)
		}
	}
}

func TestDestinationChangeNamesWhatChanged(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"https://h.example/in?b=2&a=1", "https://H.example:443/in/?a=1&b=2", ""},
		{"https://h.example/in?bucket=mine", "https://h.example/in?bucket=theirs", "query"},
		{"https://h.example/in", "https://h.example/other", "path"},
		{"https://h.example/in", "http://h.example/in", "scheme and port"},
		{"https://h.example/in", "https://8.8.4.4/in?q=1", "host and query"},
		{"https://h.example/in", "http://o.example:8080/x", "scheme, host, port and path"},
		{"https://h.example/in", "://bad", "scheme, host, port, path and query"},
	} {
		if got := hooks.DestinationChange(c.a, c.b); got != c.want {
			t.Errorf("DestinationChange(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
