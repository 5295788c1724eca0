package secrets

import (
	"errors"
	"net/url"
	"strings"
)

// maskPrefix starts every mask Mask makes.
const maskPrefix = "****"

// IsMasked reports whether v is a mask (as Mask makes it) rather than a
// value: a client sends a secret back masked to keep the stored one.
func IsMasked(v string) bool { return strings.HasPrefix(v, maskPrefix) }

// MaskURL masks, as Mask does, every part of a URL that can carry a
// credential: the user and the password, each segment of the path (with
// its matrix parameters), each query value (a query item without a value
// whole, since it may be a bare key), and the fragment. The scheme, the
// host and the port stay, and so do the separators and the names of query
// values, so that the destination can be recognized and the mask sent
// back (KeepURL). What is not an absolute URL is masked whole.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	if err != nil || u.Host == "" || !ok {
		if raw == "" {
			return ""
		}
		return maskPrefix
	}
	rest, fragment, hasFragment := strings.Cut(rest, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	var b strings.Builder
	b.WriteString(scheme + "://")
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		user, password, hasPassword := strings.Cut(authority[:i], ":")
		b.WriteString(Mask(user))
		if hasPassword {
			b.WriteString(":" + Mask(password))
		}
		b.WriteString("@")
		authority = authority[i+1:]
	}
	b.WriteString(authority)
	segments := strings.Split(path, "/")
	for i, s := range segments {
		segments[i] = Mask(s)
	}
	b.WriteString(strings.Join(segments, "/"))
	if hasQuery {
		items := strings.Split(query, "&")
		for i, item := range items {
			if name, value, ok := strings.Cut(item, "="); ok && name != "" && value != "" {
				items[i] = name + "=" + Mask(value)
			} else {
				items[i] = Mask(item)
			}
		}
		b.WriteString("?" + strings.Join(items, "&"))
	}
	if hasFragment {
		b.WriteString("#" + Mask(fragment))
	}
	return b.String()
}

// ErrMaskedURL is KeepURL's refusal of a masked URL that is not the
// stored one as answered.
var ErrMaskedURL = errors.New("holds a mask (****) but is not the stored URL as answered: a masked URL keeps the stored one " +
	"only when sent back unchanged, so a new or changed URL must be sent in full")

// KeepURL returns the URL a client means by sent, given the stored URL
// (empty when none is stored): sent itself when it holds no mask, the
// stored URL when sent is its mask (MaskURL), so a client can send back
// what it read. Any other URL holding a mask is ErrMaskedURL: a mask
// never stands for a URL with another destination.
func KeepURL(sent, stored string) (string, error) {
	if !strings.Contains(sent, maskPrefix) {
		return sent, nil
	}
	if stored == "" || MaskURL(stored) != sent {
		return "", ErrMaskedURL
	}
	return stored, nil
}
