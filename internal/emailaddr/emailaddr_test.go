package emailaddr_test

import (
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/emailaddr"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"Ada@Example.COM":           "ada@example.com",
		"  grace.hopper@navy.mil  ": "grace.hopper@navy.mil",
		"a+tag@sub.example.org":     "a+tag@sub.example.org",
		"Ünï@example.com":           "ünï@example.com",
		// Quotes that change nothing are dropped; quotes the local part
		// needs are kept, so the address stays the one given.
		"\"quoted\"@example.com": "quoted@example.com",
		"\"Ada\"@Example.com":    "ada@example.com",
		"\"a b\"@example.com":    "\"a b\"@example.com",
		"\"a@b\"@example.com":    "\"a@b\"@example.com",
		"\"a..b\"@example.com":   "\"a..b\"@example.com",
		"\"a\\\"b\"@example.com": "\"a\\\"b\"@example.com",
		// Not an address alone.
		"Ada <ada@example.com>":             "",
		"<ada@example.com>":                 "",
		"ada@example.com (Ada)":             "",
		"=?utf-8?q?Ada?= <ada@example.com>": "",
		"ada@example.com, b@c.d":            "",
		"ada":                               "",
		"ada@":                              "",
		"@example.com":                      "",
		"ada lovelace@example.com":          "",
		"":                                  "",
		"ada@@example.com":                  "",
		"a@b@example.com":                   "",
	}
	for in, want := range cases {
		got, err := emailaddr.Normalize(in)
		if want == "" {
			if err == nil {
				t.Errorf("%q accepted as %q", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
		// The spelling is its own: normalizing it again changes nothing.
		if again, err := emailaddr.Normalize(got); err != nil || again != got {
			t.Errorf("%q normalized again: %q, %v", got, again, err)
		}
	}
	long := "a@" + strings.Repeat("b", emailaddr.MaxLength-6) + ".com"
	if _, err := emailaddr.Normalize(long); err != nil {
		t.Errorf("an address of %d bytes refused: %v", len(long), err)
	}
	long = "b" + long
	if _, err := emailaddr.Normalize(long); err == nil {
		t.Errorf("an address of %d bytes accepted", len(long))
	}
}
