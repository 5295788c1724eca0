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
// UnmarshalJSON, so that a value that passes schema validation but does not
// fit its Go field (a number too large, 1e3 for an integer) is refused
// naming the field rather than with encoding/json's text.
var JSONFormat = huma.Format{Marshal: huma.DefaultJSONFormat.Marshal, Unmarshal: UnmarshalJSON}

// UnmarshalJSON is json.Unmarshal whose type errors name the field by its
// path in the body, with a message free of Go type names. NewError turns
// such an error, which huma reports at location "body", into a failure at
// the field.
func UnmarshalJSON(data []byte, v any) error {
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
