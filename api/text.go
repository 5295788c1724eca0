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
// neither is taken), and returns its field path and what is wrong. A
// document that is not JSON is left to the decoder, unless its bytes are
// not UTF-8.
//
// In an object that decodes into a struct, two names that differ only in
// case are the same property: encoding/json matches names to struct fields
// ignoring case, so huma would validate one spelling while the decoder
// keeps the last. The keys of a map keep their case (custom fields, GeoJSON
// properties), and there only the same name twice is refused. schema is the
// schema of the document, its $refs resolved through reg, walked alongside
// the tokens to tell the two apart (see objectKind); where it does not say
// (nil, oneOf/anyOf/allOf, a value of any type), only the same name twice
// is refused: a case rule there could refuse data whose case matters, as
// in a map, and no operation decodes such a value into a struct.
func badJSON(body []byte, reg huma.Registry, schema *huma.Schema) (field, msg string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object  bool
		fold    bool // names differing only in case are one property
		wantKey bool
		key     string
		index   int
		schema  *huma.Schema      // this value's, resolved; nil: unknown
		keys    map[string]string // name (folded when fold) -> the name as given first
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
	// valueSchema is the schema of the value that comes next.
	valueSchema := func() *huma.Schema {
		n := len(stack)
		if n == 0 {
			return resolveSchema(reg, schema)
		}
		if top := stack[n-1]; top.object {
			return resolveSchema(reg, propertySchema(top.schema, top.key))
		} else if top.schema != nil && !composedSchema(top.schema) {
			return resolveSchema(reg, top.schema.Items)
		}
		return nil
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
				s := valueSchema()
				stack = append(stack, &frame{object: d == '{', wantKey: d == '{', schema: s, fold: d == '{' && objectKind(s) == structObject})
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
			name := s
			if top.fold {
				name = foldName(s)
			}
			if first, ok := top.keys[name]; ok {
				if first == s {
					return path(""), "is given more than once"
				}
				return path(""), "is given more than once, as " + strconv.Quote(first) + " and as " + strconv.Quote(s) +
					": names that differ only in case are the same property"
			}
			if top.keys == nil {
				top.keys = map[string]string{}
			}
			top.keys[name] = s
			continue
		}
		if bad != "" {
			return path(""), bad
		}
		done()
	}
}

// The kinds of JSON object objectKind tells apart.
const (
	unknownObject = iota // the schema does not say
	structObject         // decoded into a struct: fixed properties
	mapObject            // decoded into a map: the keys are data
)

// objectKind says what an object of schema s decodes into. huma writes a
// struct as fixed properties with additionalProperties false (or true when
// the struct allows others), and a map as additionalProperties holding the
// schema of its values, without properties.
func objectKind(s *huma.Schema) int {
	switch {
	case s == nil || composedSchema(s):
		return unknownObject
	case isMapSchema(s):
		return mapObject
	case len(s.Properties) > 0 || s.AdditionalProperties == false:
		return structObject
	}
	return unknownObject
}

func isMapSchema(s *huma.Schema) bool {
	_, ok := s.AdditionalProperties.(*huma.Schema)
	return ok
}

// composedSchema: s is made of others (oneOf, anyOf, allOf, not), which the
// walk does not pick between.
func composedSchema(s *huma.Schema) bool {
	return len(s.OneOf) > 0 || len(s.AnyOf) > 0 || len(s.AllOf) > 0 || s.Not != nil
}

// propertySchema is the schema of the property key of an object of schema
// s, unresolved, or nil when unknown. As encoding/json does, a name given
// in another case than the property's is that property.
func propertySchema(s *huma.Schema, key string) *huma.Schema {
	if s == nil || composedSchema(s) {
		return nil
	}
	if p, ok := s.Properties[key]; ok {
		return p
	}
	if ap, ok := s.AdditionalProperties.(*huma.Schema); ok {
		return ap
	}
	for name, p := range s.Properties {
		if strings.EqualFold(name, key) {
			return p
		}
	}
	return nil
}

// resolveSchema follows the $refs of s through reg; nil when one does not
// resolve.
func resolveSchema(reg huma.Registry, s *huma.Schema) *huma.Schema {
	for i := 0; s != nil && s.Ref != ""; i++ {
		if reg == nil || i == 8 {
			return nil
		}
		s = reg.SchemaFromRef(s.Ref)
	}
	return s
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
// percent-decoded), an integer path parameter not written in canonical
// decimal (see pathInteger), and a query parameter given more than once
// (huma would read the first one only) unless the document declares it
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
			for _, v := range humafiber.Unwrap(ctx).Context().Request.Header.PeekAll(p.Name) {
				values = append(values, string(v))
			}
		default:
			continue
		}
		for _, v := range values {
			if msg := badText(v); msg != "" {
				return rest.Invalid(p.In, p.Name, msg, nil)
			}
		}
		if p.In == "path" && pathInteger(p) {
			if bad := rest.CheckPathInteger(p.Name, values[0]); bad != nil {
				return bad
			}
		}
		if p.In == "query" && len(values) > 1 && (p.Explode == nil || !*p.Explode) {
			return rest.Invalid(p.In, p.Name, repeatedParameter(p), nil)
		}
		// A header read as one value (an idempotency key, a signature) given
		// twice would count once, silently; Accept is a list by definition.
		if p.In == "header" && len(values) > 1 && !strings.EqualFold(p.Name, "Accept") {
			return rest.Invalid(p.In, p.Name, "is given more than once", nil)
		}
	}
	return nil
}

// pathInteger reports whether p, a path parameter, holds an integer: the
// document types it as one, or as a string of rest.IntegerPattern (the
// directory's ids). huma reads an integer with strconv.ParseInt, which
// takes 0001 and +1 for 1; every such parameter of every operation is held
// to canonical decimal here instead, before the operation runs.
func pathInteger(p *huma.Param) bool {
	return p.Schema != nil && (p.Schema.Type == huma.TypeInteger ||
		p.Schema.Type == huma.TypeString && p.Schema.Pattern == rest.IntegerPattern)
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
