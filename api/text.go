package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humafiber"

	"github.com/tocsin/tocsin/api/rest"
)

// PostgreSQL text holds neither NUL characters nor invalid UTF-8: such input
// is refused at the edge, naming the field, rather than failing in the
// database.
const (
	msgNUL  = "contains a NUL character"
	msgUTF8 = "is not valid UTF-8"
)

// badText says what is wrong with s for PostgreSQL text, or "".
func badText(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return msgNUL
	case !utf8.ValidString(s):
		return msgUTF8
	}
	return ""
}

// badJSON finds the first string (key or value) of a JSON document that
// holds a NUL character (raw or \u0000) or invalid UTF-8, or the first
// property an object gives twice (decoders differ on which one counts, so
// neither is taken), and returns its field path and what is wrong. Two
// names that differ only in case are the same property, in every object,
// free-form maps included: encoding/json matches names to struct fields
// ignoring case (huma validates one spelling while the decoder keeps the
// last), and HTTP header names ignore case. A document
// that is not JSON is left to the decoder, unless its bytes are not UTF-8.
func badJSON(body []byte) (field, msg string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object  bool
		wantKey bool
		key     string
		index   int
		keys    map[string]string // folded name -> the name as given first
	}
	var stack []*frame
	path := func(key string) string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			}
		}
		if key != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(key)
		}
		return b.String()
	}
	done := func() {
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.object {
				top.wantKey = true
			} else {
				top.index++
			}
		}
	}
	var prev int64
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) || utf8.Valid(body) {
				return "", ""
			}
			return path(""), msgUTF8
		}
		raw := body[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, &frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
				done()
			}
			continue
		}
		s, isString := tok.(string)
		bad := ""
		switch {
		case !utf8.Valid(raw):
			bad = msgUTF8
		case isString && strings.IndexByte(s, 0) >= 0:
			bad = msgNUL
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			top := stack[n-1]
			top.key, top.wantKey = s, false
			if bad != "" {
				return path(""), "the property name " + bad
			}
			folded := foldName(s)
			if first, ok := top.keys[folded]; ok {
				if first == s {
					return path(""), "is given more than once"
				}
				return path(""), "is given more than once, as " + strconv.Quote(first) + " and as " + strconv.Quote(s) +
					": names that differ only in case are the same property"
			}
			if top.keys == nil {
				top.keys = map[string]string{}
			}
			top.keys[folded] = s
			continue
		}
		if bad != "" {
			return path(""), bad
		}
		done()
	}
}

// foldName is the form in which two property names are equal exactly when
// encoding/json would match both to the same struct field, that is when
// bytes.EqualFold says they are equal: each rune is replaced by the
// smallest rune of its unicode.SimpleFold orbit (so the Kelvin sign K is
// k and the long s ſ is s), with ASCII letters in lower case. A name of
// lower-case ASCII is its own fold and costs no allocation.
func foldName(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			break
		}
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s)+utf8.UTFMax)
	copy(b, s[:i])
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// checkParameters refuses a path, query or header parameter of the
// operation holding a NUL character or invalid UTF-8 (raw or
// percent-decoded), and a query parameter given more than once (huma
// would read the first one only) unless the document declares it
// exploded, naming it. Undeclared parameters are never read.
func checkParameters(ctx huma.Context, op *huma.Operation) *rest.ProblemDetails {
	for _, p := range op.Parameters {
		var values []string
		switch p.In {
		case "path":
			v := ctx.Param(p.Name)
			values = append(values, v)
			if u, err := url.PathUnescape(v); err == nil {
				values = append(values, u)
			}
		case "query":
			for _, v := range humafiber.Unwrap(ctx).Context().QueryArgs().PeekMulti(p.Name) {
				values = append(values, string(v))
			}
		case "header":
			values = append(values, ctx.Header(p.Name))
		default:
			continue
		}
		for _, v := range values {
			if msg := badText(v); msg != "" {
				return rest.Invalid(p.In, p.Name, msg, nil)
			}
		}
		if p.In == "query" && len(values) > 1 && (p.Explode == nil || !*p.Explode) {
			return rest.Invalid(p.In, p.Name, repeatedParameter(p), nil)
		}
	}
	return nil
}

// repeatedParameter says why a query parameter given more than once is
// refused, and for a list how to give several values.
func repeatedParameter(p *huma.Param) string {
	msg := "is given more than once"
	if p.Schema != nil && p.Schema.Type == huma.TypeArray {
		msg += "; give the list once, its values separated by commas"
	}
	return msg
}
