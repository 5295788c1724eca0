package hooks

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
)

// Limits of a DNS name (RFC 1035 §2.3.4), in bytes of its ASCII form
// without the trailing dot.
const (
	maxLabel = 63
	maxName  = 253
)

// CheckHost checks the host and port of u, a hook target's or a channel
// provider's URL, by the rule both follow, and returns the host as the
// HTTP client dials it. The host is an IP address (IPv6 in brackets) or a
// DNS name of RFC 1123 labels: letters, digits and inner hyphens, 1 to 63
// bytes each, 253 at most in all, with at most one trailing dot (an IP
// address takes none). An
// underscore is allowed too: resolvers answer for such names, and the
// internal services a deployment allows (a Compose service named
// sms_gateway) are often named so. An
// internationalized name is read by IDNA's lookup rules (UTS #46) and
// returned in its ASCII form (bücher.example is xn--bcher-kva.example);
// it must be written as those rules read it, so that what a tenant reads
// is what is dialed: characters that stand for others (fullwidth ｅ, the
// ideographic full stop 。, compatibility forms) are refused, and so is a
// label that mixes scripts not written together (a Cyrillic е among
// Latin letters). A port, when the URL has a ':' after the host, is 1 to
// 65535. Numbers that some resolvers read as an IPv4 address in another
// form (127.1, 0x7f000001) are refused as names. The errors are meant for
// the API client.
func CheckHost(u *url.URL) (string, error) {
	host := u.Hostname()
	if host == "" {
		return "", errors.New("no host")
	}
	if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("the port after %s: is empty; give the port or leave out the ':'", host)
	}
	if port := u.Port(); port != "" {
		if n, err := netip.ParseAddrPort("0.0.0.0:" + port); err != nil || n.Port() == 0 {
			return "", fmt.Errorf("bad port %q", port)
		}
	}
	if strings.HasPrefix(u.Host, "[") {
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return "", fmt.Errorf("the host %s in brackets is not an IPv6 address", host)
		}
		return host, nil
	}
	return checkName(host)
}

// checkName checks host, an IP address or a DNS name without brackets nor
// port, by CheckHost's rule and returns it as the HTTP client dials it: an
// internationalized name in its ASCII form.
func checkName(host string) (string, error) {
	name, dot := strings.CutSuffix(host, ".")
	if _, err := netip.ParseAddr(name); err == nil {
		if dot {
			// A resolver looks 1.1.1.1. up as a name, which nothing
			// answers, and TLS would check the certificate for a name:
			// every connection to it would fail.
			return "", fmt.Errorf("the host %s is an IP address followed by a dot, which clients look up as a name rather than dial: write %s", host, name)
		}
		return host, nil
	}
	if name == "" {
		return "", fmt.Errorf("the host %s is not a name", host)
	}
	if numericHost(name) {
		return "", fmt.Errorf("the host %s is an IP address in a form other than the standard one; write it as four decimal numbers or as IPv6", host)
	}
	for label := range strings.SplitSeq(name, ".") {
		if err := checkLabel(host, label); err != nil {
			return "", err
		}
	}
	ascii, err := lookup.ToASCII(name)
	if err != nil {
		return "", fmt.Errorf("the host %s is not a valid internationalized name (%s)", host, strings.TrimPrefix(err.Error(), "idna: "))
	}
	uni, err := lookup.ToUnicode(ascii)
	if err != nil {
		return "", fmt.Errorf("the host %s is not a valid internationalized name (%s)", host, strings.TrimPrefix(err.Error(), "idna: "))
	}
	if !isASCII(name) && uni != strings.ToLower(name) {
		return "", fmt.Errorf("the host %s is written with characters that stand for others (fullwidth or compatibility forms); it reads as %s: write that", host, uni)
	}
	for label := range strings.SplitSeq(uni, ".") {
		if !oneScript(label) {
			return "", fmt.Errorf("the host %s mixes scripts in the label %s (letters that look alike from different alphabets)", host, label)
		}
	}
	for label := range strings.SplitSeq(ascii, ".") {
		if len(label) > maxLabel {
			return "", fmt.Errorf("the host %s has a label longer than %d bytes in its ASCII form (%s)", host, maxLabel, label)
		}
		// IDNA without its ASCII rule keeps the ASCII characters of an
		// internationalized label as they are: bü*cher is xn--b*cher-3ya.
		if err := checkLabel(host, label); err != nil {
			return "", err
		}
	}
	if len(ascii) > maxName {
		return "", fmt.Errorf("the host %s is longer than %d bytes in its ASCII form", host, maxName)
	}
	if dot {
		ascii += "."
	}
	return ascii, nil
}

// lookup is IDNA's lookup profile (UTS #46) but for two ASCII rules that
// names in use break: the underscore, which checkLabel allows, and
// hyphens in a label's 3rd and 4th places (r3---sn-abc.googlevideo.com),
// as browsers allow them; a label that claims to be internationalized
// (xn--) is still decoded and checked.
var lookup = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.StrictDomainName(false), idna.CheckHyphens(false))

// checkLabel checks one label of host: not empty, no hyphen first or
// last, and, when ASCII, made of letters, digits, underscores and
// hyphens, at most 63 bytes.
// Labels in other scripts are left to IDNA, and their ASCII forms checked
// here in turn.
func checkLabel(host, label string) error {
	switch {
	case label == "":
		return fmt.Errorf("the host %s has an empty label (two dots in a row, or more than one trailing dot)", host)
	case label[0] == '-' || label[len(label)-1] == '-':
		return fmt.Errorf("the host %s has a label that starts or ends with a hyphen (%s)", host, label)
	case !isASCII(label):
		return nil
	case len(label) > maxLabel:
		return fmt.Errorf("the host %s has a label longer than %d bytes (%s)", host, maxLabel, label)
	}
	for i := 0; i < len(label); i++ {
		c := label[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("the host %s has a character other than letters, digits, underscores and hyphens (%q)", host, c)
		}
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// oneScript reports whether the letters of label are of one script, or of
// scripts written together; digits, hyphens and combining marks count for
// none.
func oneScript(label string) bool {
	var seen []string
	for _, r := range label {
		if s := scriptOf(r); s != "" && !slices.Contains(seen, s) {
			seen = append(seen, s)
		}
	}
	if len(seen) <= 1 {
		return true
	}
	// The scripts written together (Unicode's "highly restrictive"
	// level, UTS #39 §5.2); any other mix, such as Latin with Cyrillic or
	// Greek, is how look-alike names are made.
	for _, set := range [][]string{
		{"Latin", "Han", "Hiragana", "Katakana"},
		{"Latin", "Han", "Bopomofo"},
		{"Latin", "Han", "Hangul"},
	} {
		if !slices.ContainsFunc(seen, func(s string) bool { return !slices.Contains(set, s) }) {
			return true
		}
	}
	return false
}

// scriptOf names the script of r, "" for the characters of every script
// (Common and Inherited).
func scriptOf(r rune) string {
	if r < 0x80 {
		if unicode.IsLetter(r) {
			return "Latin"
		}
		return ""
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}
