package rest

import (
	"mime"
	"mime/multipart"
	"strings"
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
