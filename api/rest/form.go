package rest

import (
	"fmt"
	"math"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/tocsin/tocsin/internal/ids"
)

// PartName is the name of a part of a multipart/form-data body: the name
// parameter of its Content-Disposition, which RFC 7578 has be form-data.
// Every operation that takes a form reads its parts' names here, so that
// one rule names them all. A part it cannot take is refused naming it where
// it has a name (the name is returned with the error too):
//   - one without a name, which a form reader would drop without a word;
//   - one whose disposition is not form-data (attachment, file, inline),
//     which readers drop as well;
//   - one holding parts of its own (multipart/mixed, RFC 2388's way of
//     giving one field several files): each field is given once, as a
//     part of its own.
func PartName(p *multipart.Part) (string, error) {
	disposition, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	name := params["name"]
	if err != nil || name == "" {
		return name, Invalid("body", "", `a part without a name: give each part the header Content-Disposition: form-data; name="…"`, nil)
	}
	if disposition != "form-data" {
		return name, Invalid("body", name, "has Content-Disposition "+disposition+`: each part of a form is form-data (Content-Disposition: form-data; name="`+name+`")`, nil)
	}
	if mt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		return name, Invalid("body", name, "is a "+mt+" part, the form of a field given more than once: give it once, as one part with one value", nil)
	}
	return name, nil
}

// FormBoolean reads v, the text of the boolean form field name: true or
// false, as JSON writes them (True, TRUE, False and FALSE, as other
// clients write them, too), else a 400 naming the field. Every boolean
// form field is read by this one rule; 1, t, yes, on and the empty text
// are refused.
func FormBoolean(name, v string) (bool, error) {
	switch v {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	return false, Invalid("body", name, "must be true or false", v)
}

// FormInteger reads v, the text of the integer form field name: a number
// from low (at least 0) to high written in canonical decimal, as path
// integers are (ids.Decimal), else a 400 naming the field that says which
// numbers it takes and how to write them (up to 9223372036854775807 when
// the digits sent were beyond it).
func FormInteger(name, v string, low, high int64) (int64, error) {
	n, ok := ids.Decimal(v)
	if ok && n >= low && n <= high {
		return n, nil
	}
	which := fmt.Sprintf("from %d to %d", low, high)
	if high == math.MaxInt64 && !beyondInt64(v) {
		which = fmt.Sprintf("of %d or more", low)
	}
	return 0, Invalid("body", name, "must be a whole number "+which+", in digits without sign, spaces or leading zeros", v)
}
