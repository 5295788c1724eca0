package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// JSONFormat is huma's JSON format with request bodies read by
// UnmarshalJSON, so that a whole number written with a fraction or an
// exponent (1.0, 1e3) fills an integer field, as the schema's integer type
// allows, and a value that passes schema validation but does not fit its Go
// field (a number too large) is refused naming the field rather than with
// encoding/json's text.
var JSONFormat = huma.Format{Marshal: huma.DefaultJSONFormat.Marshal, Unmarshal: UnmarshalJSON}

// UnmarshalJSON is json.Unmarshal that takes a JSON number for the number
// it is: a whole number fills an integer field however it is written (1.0,
// 1e3, 10e-1), as it meets the schema's integer type. Its type errors name
// the field by its path in the body, with a message free of Go type names.
// NewError turns such an error, which huma reports at location "body", into
// a failure at the field.
func UnmarshalJSON(data []byte, v any) error {
	data = wholeNumbers(data)
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	field, ok := pathAt(data, te.Offset)
	if !ok {
		field = te.Field
	}
	if field == "" {
		return errors.New(expected(te.Type))
	}
	return &fieldError{field: field, message: expected(te.Type)}
}

// DecodeJSONAt decodes data, the JSON value at field of a request body
// (alerts[3]), into v as UnmarshalJSON does: a value that does not fit its
// Go field is a 400 naming the field inside body.<field>.
func DecodeJSONAt(data []byte, v any, field string) error {
	err := UnmarshalJSON(data, v)
	if err == nil {
		return nil
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return Invalid("body", field+"."+fe.field, fe.message, nil)
	}
	return Invalid("body", field, err.Error(), nil)
}

// fieldError is a body value that does not fit its field. Its text is
// "body.<field>: <message>", which NewError reads back: huma keeps only the
// text of an unmarshal error.
type fieldError struct{ field, message string }

func (e *fieldError) Error() string { return bodyFieldPrefix + e.field + fieldSeparator + e.message }

const (
	bodyFieldPrefix = "body."
	fieldSeparator  = ": "
)

// bodyField reads back the field and message of a fieldError's text.
func bodyField(text string) (field, message string, ok bool) {
	rest, ok := strings.CutPrefix(text, bodyFieldPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndex(rest, fieldSeparator)
	if i <= 0 {
		return "", "", false
	}
	return rest[:i], rest[i+len(fieldSeparator):], true
}

// expected says in plain words what a field of type t accepts.
func expected(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "unexpected value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		shift := 64 - t.Bits()
		return fmt.Sprintf("expected an integer between %d and %d", int64(math.MinInt64)>>shift, int64(math.MaxInt64)>>shift)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "expected an integer between 0 and " + strconv.FormatUint(uint64(math.MaxUint64)>>(64-t.Bits()), 10)
	case reflect.Float32:
		return fmt.Sprintf("expected a number between %g and %g", -math.MaxFloat32, math.MaxFloat32)
	case reflect.Float64:
		return fmt.Sprintf("expected a number between %g and %g", -math.MaxFloat64, math.MaxFloat64)
	case reflect.String:
		return "expected string"
	case reflect.Bool:
		return "expected boolean"
	case reflect.Slice, reflect.Array:
		return "expected array"
	case reflect.Struct, reflect.Map:
		return "expected object"
	}
	return "unexpected value"
}

// pathAt is the path (settings.recipients.contactIds[0]) of the last value
// of the JSON document data that ends at or before offset: encoding/json
// reports a value that does not fit its field at the value's end, or one
// byte past it when decoding into an interface.
func pathAt(data []byte, offset int64) (string, bool) {
	type frame struct {
		array   bool
		index   int
		key     string
		wantKey bool
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.array {
				fmt.Fprintf(&b, "[%d]", f.index)
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
		return b.String()
	}
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].wantKey = true
			}
		}
	}
	var found string
	var ok bool
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return found, ok
		}
		n := len(stack)
		if n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].wantKey = key, false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:n-1]
			afterValue()
			continue
		}
		if dec.InputOffset() > offset {
			return found, ok
		}
		found, ok = path(), n > 0
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{array: true})
		default:
			afterValue()
		}
	}
}

// wholeNumbers returns data with each number that has a fraction or an
// exponent but a whole value within the range of a 64-bit integer (1.0,
// 1e3, -25e-1 is not one) written as that integer (1, 1000), so that
// encoding/json, which refuses such a number for an integer field, reads it
// as the number it is. A float field reads either form as the same value.
// Strings, and numbers that are not whole or out of range, are left as they
// are; data is returned itself when nothing is rewritten.
func wholeNumbers(data []byte) []byte {
	if bytes.IndexAny(data, ".eE") < 0 {
		return data
	}
	var out []byte
	last := 0 // data[last:] is not yet copied to out
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			// Skip the string, escapes and all.
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			start := i
			for i+1 < len(data) && strings.IndexByte("0123456789+-.eE", data[i+1]) >= 0 {
				i++
			}
			if whole, ok := wholeNumber(data[start : i+1]); ok {
				out = append(append(out, data[last:start]...), whole...)
				last = i + 1
			}
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// wholeNumber is the JSON number n as a plain integer when n has a fraction
// or an exponent and its value is a whole number within the range of int64
// or uint64.
func wholeNumber(n []byte) (string, bool) {
	if bytes.IndexAny(n, ".eE") < 0 {
		return "", false // an integer already
	}
	s := string(n)
	sign, s := "", strings.TrimPrefix(s, "-")
	if len(s) < len(n) {
		sign = "-"
	}
	mantissa, exponent, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, hasFrac := strings.Cut(mantissa, ".")
	if !digits(intPart) || hasFrac && !digits(frac) || len(intPart) > 1 && intPart[0] == '0' {
		return "", false
	}
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(exponent)
		if err != nil || !digits(strings.TrimLeft(exponent, "+-")) || e < -400 || e > 400 {
			return "", false
		}
		exp = e
	}
	// The value is ds × 10^exp.
	ds := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if ds == "" {
		return sign + "0", true
	}
	if exp < 0 {
		if -exp > len(ds) || strings.Trim(ds[len(ds)+exp:], "0") != "" {
			return "", false // a fraction
		}
		ds = ds[:len(ds)+exp]
	} else {
		if len(ds)+exp > 20 {
			return "", false // beyond every integer field
		}
		ds += strings.Repeat("0", exp)
	}
	whole := sign + ds
	if _, err := strconv.ParseInt(whole, 10, 64); err != nil {
		if _, err := strconv.ParseUint(whole, 10, 64); err != nil {
			return "", false
		}
	}
	return whole, true
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
