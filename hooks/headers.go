package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/storage/hooksubs"
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

// HeaderProblem is a custom header CheckHeaders refuses: Name is the
// header as given (empty for a problem of the whole set) and Err says why.
type HeaderProblem struct {
	Name string
	Err  error
}

// CheckHeaders validates a subscription's custom headers and returns every
// bad one, in sorted order of their names, with the reason. Header names
// are case-insensitive, so two names that differ only in case are one
// header given twice (the later name is the bad one).
func CheckHeaders(h map[string]string) []HeaderProblem {
	if len(h) > MaxHeaders {
		return []HeaderProblem{{Err: fmt.Errorf("at most %d custom headers", MaxHeaders)}}
	}
	var out []HeaderProblem
	seen := map[string]string{}
	for _, name := range sortedNames(h) {
		if err := checkHeader(name, h[name], seen); err != nil {
			out = append(out, HeaderProblem{Name: name, Err: err})
		}
	}
	return out
}

// checkHeader checks one header; seen maps the canonical names met so far
// to the name they were given as.
func checkHeader(name, value string, seen map[string]string) error {
	if name == "" || len(name) > 100 || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return fmt.Errorf("%q is not a valid header name", name)
	}
	canonical := textproto.CanonicalMIMEHeaderKey(name)
	if reserved[canonical] {
		return fmt.Errorf("the header %s is set by tocsin and cannot be overridden", name)
	}
	if first, ok := seen[canonical]; ok {
		return fmt.Errorf("the header %s is given twice, as %s and %s: header names are case-insensitive", canonical, first, name)
	}
	seen[canonical] = name
	if len(value) > 1000 || strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("the value of %s must be at most 1000 characters on one line", name)
	}
	// A masked value stands for the stored value, which
	// KeepMaskedHeaders checks it against.
	if !secrets.IsMasked(value) && strings.IndexFunc(value, func(r rune) bool { return !isValueChar(r) }) >= 0 {
		return fmt.Errorf("the value of %s may hold only visible ASCII characters, spaces and tabs (RFC 9110 field values)", name)
	}
	return nil
}

func sortedNames(h map[string]string) []string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// isValueChar reports whether r may appear in a header value: visible
// ASCII, space and tab. RFC 9110 keeps other bytes (obs-text) only for
// old messages, and receivers read them differently.
func isValueChar(r rune) bool {
	return r >= 0x21 && r <= 0x7e || r == ' ' || r == '\t'
}

func isTokenChar(r rune) bool {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// MaskHeaders returns h with every value masked as secrets.Mask does:
// "****" and at most the last four characters. Header values often carry
// the receiver's credentials, so none is answered in full.
func MaskHeaders(h map[string]string) map[string]string {
	if len(h) == 0 {
		return nil
	}
	m := make(map[string]string, len(h))
	for name, value := range h {
		m[name] = secrets.Mask(value)
	}
	return m
}

// KeepMaskedHeaders replaces, in h, each masked value (one that starts with
// "****") with the stored value of the same header (names compared
// case-insensitively) in old, which it must be the mask of: a client may
// send back what it read and change only what it means to change. The
// headers are sent to url and were sent to oldURL: a masked value keeps the
// stored one only while both have the same destination (SameDestination),
// so that a new target cannot receive secrets its author never gave. It
// returns the name of a masked value it cannot keep.
func KeepMaskedHeaders(h map[string]string, url string, old map[string]string, oldURL string) (string, error) {
	for _, name := range sortedNames(h) {
		value := h[name]
		if !secrets.IsMasked(value) {
			continue
		}
		prev, found := "", false
		for oldName, oldValue := range old {
			if strings.EqualFold(oldName, name) {
				prev, found = oldValue, true
			}
		}
		if !found || secrets.Mask(prev) != value {
			return name, fmt.Errorf("the value of %s is masked but no stored value of the header matches it; send the value itself", name)
		}
		if change := DestinationChange(oldURL, url); change != "" {
			return name, fmt.Errorf("the value of %s is masked but the destination changed (the url has a new %s): "+
				"send the value itself again, the stored one is only sent where it was sent before", name, change)
		}
		h[name] = prev
	}
	return "", nil
}

// HeadersAD is the associated data sealing a subscription's custom headers:
// the ciphertext only opens for its own tenant and subscription.
func HeadersAD(tenant string, id int64) []byte {
	return []byte("hook-headers:" + tenant + "/" + strconv.FormatInt(id, 10))
}

// SealHeaders seals the custom headers of the tenant's subscription id; nil
// when there are none.
func SealHeaders(box *secrets.Box, tenant string, id int64, h map[string]string) ([]byte, error) {
	if len(h) == 0 {
		return nil, nil
	}
	plain, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode headers: %w", err)
	}
	return box.Seal(plain, HeadersAD(tenant, id))
}

// OpenHeaders returns the custom headers of the tenant's subscription id.
// A non-empty plain JSON object wins over the sealed value: only versions
// before headers were sealed write it (every write since empties it), so it
// is either a row written before the upgrade or a change an instance of such
// a version made during a rolling upgrade, after the row was sealed.
func OpenHeaders(box *secrets.Box, tenant string, id int64, sealed, plain []byte) (map[string]string, error) {
	h := map[string]string{}
	if len(plain) > 0 {
		if err := json.Unmarshal(plain, &h); err != nil {
			return nil, fmt.Errorf("decode plain headers: %w", err)
		}
	}
	if len(h) > 0 || sealed == nil {
		return h, nil
	}
	if box == nil {
		return nil, fmt.Errorf("open headers: %w", secrets.ErrOpen)
	}
	b, err := box.Open(sealed, HeadersAD(tenant, id))
	if err != nil {
		return nil, fmt.Errorf("open headers: %w", err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		// Not the error itself: it may quote the decrypted text.
		return nil, errors.New("decode headers: the decrypted value is not a JSON object of strings")
	}
	return h, nil
}

// SealStoredHeaders seals the custom headers that subscriptions hold in
// plain text, of every tenant, and returns how many it sealed: rows written
// before headers were sealed, and rows that an instance of such a version
// changed during a rolling upgrade after they were sealed (the plain headers
// are the newer write and replace the sealed ones). A subscription changed
// meanwhile is left to its change, which seals its headers itself.
func SealStoredHeaders(ctx context.Context, st *hooksubs.Store, box *secrets.Box) (int, error) {
	if box == nil {
		return 0, errors.New("no secrets box to seal headers with")
	}
	n := 0
	for {
		rows, err := st.WithPlainHeaders(ctx, 100)
		if err != nil || len(rows) == 0 {
			return n, err
		}
		progress := false
		for _, r := range rows {
			h, err := OpenHeaders(box, r.Tenant, r.ID, nil, r.Headers)
			if err != nil {
				return n, fmt.Errorf("subscription %d: %w", r.ID, err)
			}
			sealed, err := SealHeaders(box, r.Tenant, r.ID, h)
			if err != nil {
				return n, err
			}
			ok, err := st.SealPlainHeaders(ctx, r, sealed)
			if err != nil {
				return n, err
			}
			if ok {
				n++
				progress = true
			}
		}
		if !progress {
			return n, nil
		}
	}
}
