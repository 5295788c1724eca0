// Package rest holds what every tocsin operation shares: RFC 9457 problem
// responses, the caller's principal, paging and sorting, and the declaration
// of operations with their scopes.
package rest

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"
	"github.com/lib/pq"
)

// ProblemTypeBase prefixes the type URI of every problem tocsin returns.
const ProblemTypeBase = "https://tocsin.dev/problems/"

// ValidationFailure names one field of a request that failed validation.
type ValidationFailure struct {
	PropertyName   string `json:"propertyName" doc:"The failing field, as a dotted path inside its location (for example settings.message.subject or pageSize)." example:"pageSize"`
	Location       string `json:"location" doc:"Where the field was: body, query, path or header, followed by the field path." example:"query.pageSize"`
	ErrorMessage   string `json:"errorMessage" doc:"What is wrong with the value." example:"expected number <= 500"`
	AttemptedValue any    `json:"attemptedValue,omitempty" doc:"The value that was received, when it is safe to echo."`
}

// ProblemDetails is the RFC 9457 body of every error response
// (content type application/problem+json).
type ProblemDetails struct {
	Type     string              `json:"type" format:"uri" doc:"A URI identifying the kind of problem." example:"https://tocsin.dev/problems/validation"`
	Title    string              `json:"title" doc:"A short summary of the kind of problem." example:"Bad Request"`
	Status   int                 `json:"status" doc:"The HTTP status code." example:"400"`
	Detail   string              `json:"detail,omitempty" doc:"What went wrong in this occurrence." example:"validation failed"`
	Instance string              `json:"instance,omitempty" doc:"The request id of this occurrence, for support."`
	Errors   []ValidationFailure `json:"errors,omitempty" doc:"For validation problems, one entry per failing field, at most 20, ordered by location (indexes by number)."`
	// MoreErrors counts the failures left out of Errors.
	MoreErrors int `json:"moreErrors,omitempty" doc:"How many further failing fields were found but not listed." example:"0"`

	headers http.Header
	cause   error
}

// Bounds of a problem body: whatever the request, an error response stays
// small (well under 64 KiB).
const (
	// MaxFailures is how many ValidationFailures a problem lists.
	MaxFailures = 20
	// previewBytes bounds an attemptedValue string.
	previewBytes = 64
	// nameBytes bounds a property name or location.
	nameBytes = 256
	// textBytes bounds a detail or error message.
	textBytes = 1024
)

// Cause returns the error behind a 5xx problem, for the log; it is never
// sent to the client.
func (p *ProblemDetails) Cause() error { return p.cause }

// Bound puts the failures in order and caps the problem's size: at most
// MaxFailures failures (the rest counted in MoreErrors), each attempted
// value cut to a short preview, and every text cut to a bounded length of
// valid UTF-8. The failures are ordered by location (indexes by number:
// body.alerts[2] before body.alerts[10]), those at one location as they
// were found, so the same request always lists the same failures in the
// same order, whatever order validation found them in.
func (p *ProblemDetails) Bound() {
	slices.SortStableFunc(p.Errors, func(a, b ValidationFailure) int { return compareLocations(a.Location, b.Location) })
	if n := len(p.Errors); n > MaxFailures {
		p.MoreErrors += n - MaxFailures
		p.Errors = p.Errors[:MaxFailures:MaxFailures]
	}
	p.Detail = clip(p.Detail, textBytes)
	p.Title = clip(p.Title, textBytes)
	for i := range p.Errors {
		f := &p.Errors[i]
		f.PropertyName = clip(f.PropertyName, nameBytes)
		f.Location = clip(f.Location, nameBytes)
		f.ErrorMessage = clip(f.ErrorMessage, textBytes)
		f.AttemptedValue = Preview(f.AttemptedValue)
	}
}

// compareLocations orders two locations as text, except that runs of
// digits compare as the numbers they are.
func compareLocations(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun is the number of ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// Preview is a short, safe rendering of a received value: strings are cut
// to a few dozen bytes of valid UTF-8, numbers and booleans kept, objects
// and arrays summarised by their size.
func Preview(v any) any {
	switch x := v.(type) {
	case nil, bool, int, int32, int64, uint, uint32, uint64, float32, float64:
		return v
	case string:
		return clip(x, previewBytes)
	case []byte:
		return clip(string(x), previewBytes)
	case map[string]any:
		return fmt.Sprintf("an object of %d properties", len(x))
	case []any:
		return fmt.Sprintf("an array of %d items", len(x))
	case []string:
		return fmt.Sprintf("an array of %d items", len(x))
	case fmt.Stringer:
		return clip(x.String(), previewBytes)
	default:
		return nil
	}
}

// clip cuts s to at most n bytes of valid UTF-8, marking a cut with "…".
func clip(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Error implements error.
func (p *ProblemDetails) Error() string {
	if len(p.Errors) == 0 {
		return p.Detail
	}
	parts := make([]string, len(p.Errors))
	for i, f := range p.Errors {
		parts[i] = f.Location + ": " + f.ErrorMessage
	}
	return p.Detail + " (" + strings.Join(parts, "; ") + ")"
}

// GetStatus implements huma.StatusError.
func (p *ProblemDetails) GetStatus() int { return p.Status }

// ContentType implements huma.ContentTypeFilter.
func (p *ProblemDetails) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}

// GetHeaders implements huma.HeadersError, so a problem can carry Retry-After.
func (p *ProblemDetails) GetHeaders() http.Header { return p.headers }

// WithHeader returns p with a response header added.
func (p *ProblemDetails) WithHeader(name, value string) *ProblemDetails {
	if p.headers == nil {
		p.headers = http.Header{}
	}
	p.headers.Set(name, value)
	return p
}

var typeByStatus = map[int]string{
	http.StatusBadRequest:            "validation",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not-found",
	http.StatusMethodNotAllowed:      "method-not-allowed",
	http.StatusConflict:              "conflict",
	http.StatusGone:                  "gone",
	http.StatusRequestEntityTooLarge: "too-large",
	http.StatusUnsupportedMediaType:  "unsupported-media-type",
	http.StatusTooManyRequests:       "rate-limited",
	http.StatusNotImplemented:        "not-implemented",
	http.StatusServiceUnavailable:    "unavailable",
	http.StatusInternalServerError:   "internal",
}

// Problem builds a problem of the given status. Failures, when given, are
// listed as the fields that failed validation.
func Problem(status int, detail string, failures ...ValidationFailure) *ProblemDetails {
	kind, ok := typeByStatus[status]
	if !ok {
		kind = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "-"))
	}
	return &ProblemDetails{
		Type:   ProblemTypeBase + kind,
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Errors: failures,
	}
}

// Invalid is a 400 naming one failing field. location is "body", "query",
// "path" or "header"; field is the path inside it.
func Invalid(location, field, message string, value any) *ProblemDetails {
	return Problem(http.StatusBadRequest, "validation failed", Failure(location, field, message, value))
}

// Failure builds one ValidationFailure.
func Failure(location, field, message string, value any) ValidationFailure {
	loc := location
	if field != "" {
		loc += "." + field
	}
	return ValidationFailure{PropertyName: field, Location: loc, ErrorMessage: message, AttemptedValue: value}
}

// NotFound is a 404 problem.
func NotFound(what string) *ProblemDetails {
	return Problem(http.StatusNotFound, what+" not found")
}

// Conflict is a 409 problem.
func Conflict(detail string) *ProblemDetails { return Problem(http.StatusConflict, detail) }

// Unavailable is the problem for a failed call to a dependency: a 503 naming
// it when it is really down (no connection, timed out, shutting down), else
// a generic 500. Neither carries the error's text, which may hold driver or
// SQL detail; the error is kept as the problem's Cause for the log.
func Unavailable(dependency string, err error) *ProblemDetails {
	if !IsDown(err) {
		return Internal(err)
	}
	p := Problem(http.StatusServiceUnavailable, dependency+" is unavailable").WithHeader("Retry-After", "5")
	p.cause = fmt.Errorf("%s: %w", dependency, err)
	return p
}

// TimedOut is the 503 of a request whose work ran out of the time the
// server gives one (TOCSIN_HTTP_REQUEST_TIMEOUT) while it waited, for a
// database connection or a lock most often; err, its cause, is logged.
func TimedOut(err error) *ProblemDetails {
	p := Problem(http.StatusServiceUnavailable, "the request could not finish in the time the server gives one (it waited for the database or another service that is busy) and was stopped: try again").WithHeader("Retry-After", "5")
	p.cause = err
	return p
}

// Internal is a generic 500 whose cause is logged, never sent.
func Internal(err error) *ProblemDetails {
	p := Problem(http.StatusInternalServerError, "internal error; quote the instance to support")
	p.cause = err
	return p
}

// IsDown reports whether err means a dependency could not be reached or did
// not answer in time, rather than that it answered with an error. An error
// PostgreSQL answered with is not "down" unless it is a connection,
// resource or shutdown error; other dependencies' errors count as down.
func IsDown(err error) bool {
	if err == nil {
		return false
	}
	var pqe *pq.Error
	if errors.As(err, &pqe) {
		switch pqe.Code.Class() {
		case "08", "53", "57":
			return true
		}
		return false
	}
	return true
}

// NewError replaces huma.NewError so that every error huma produces (failed
// validation, bad content type, oversize body) is a ProblemDetails. Failed
// validation is a 400 rather than huma's 422.
func NewError(status int, msg string, errs ...error) huma.StatusError {
	if status == http.StatusUnprocessableEntity {
		status = http.StatusBadRequest
	}
	p := Problem(status, msg)
	if status == 0 {
		return p
	}
	if status >= 500 {
		// Whatever failed inside is logged from the cause, never echoed:
		// it may carry driver, SQL or stack text.
		p.cause = errors.Join(errs...)
		if status == http.StatusInternalServerError {
			p.Detail = "internal error; quote the instance to support"
		}
		return p
	}
	if status == http.StatusBadRequest && msg == msgBodyRequired {
		// huma says so in the detail alone: the failure names the body.
		p.Errors = append(p.Errors, ValidationFailure{PropertyName: "body", Location: "body", ErrorMessage: msgBodyRequired})
	}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			det := d.ErrorDetail()
			location := formLocation(det.Location)
			if field, msg, ok := bodyField(det.Message); ok && location == "body" {
				// A value that does not fit its field (UnmarshalJSON):
				// huma names only the body and echoes all of it.
				p.Errors = append(p.Errors, Failure("body", field, msg, nil))
				continue
			}
			if name, ok := missingProperty(det.Message); ok {
				// huma reports a missing property at the object that
				// lacks it, with the whole object as the value.
				loc, field := location+"."+name, name
				if _, in, ok := strings.Cut(location, "."); ok {
					field = in + "." + name
				}
				p.Errors = append(p.Errors, ValidationFailure{PropertyName: field, Location: loc, ErrorMessage: det.Message})
				continue
			}
			value := det.Value
			if det.Message == validation.MsgUnexpectedProperty {
				// huma reports an unexpected property at the property,
				// with the object that holds it as the value.
				value = propertyValue(det.Value, location)
			}
			_, field, _ := strings.Cut(location, ".")
			p.Errors = append(p.Errors, ValidationFailure{
				PropertyName:   field,
				Location:       location,
				ErrorMessage:   det.Message,
				AttemptedValue: Preview(value),
			})
			continue
		}
		p.Errors = append(p.Errors, ValidationFailure{ErrorMessage: err.Error()})
	}
	if len(p.Errors) > 0 && status == http.StatusBadRequest && p.Detail == "" {
		p.Detail = "validation failed"
	}
	p.Bound()
	return p
}

// msgBodyRequired is huma's detail for an operation that requires a body
// and received none.
const msgBodyRequired = "request body is required"

// formLocation is the location of a failure huma reports in a multipart
// form as tocsin names every part of a form, body.<part>: huma puts a text
// part at form.<part> and a file part at <part> alone.
func formLocation(location string) string {
	if rest, ok := strings.CutPrefix(location, "form."); ok {
		return "body." + rest
	}
	root, _, _ := strings.Cut(location, ".")
	switch root {
	case "", "body", "query", "path", "header", "cookie":
		return location
	}
	return "body." + location
}

// propertyValue is the value of the property of object at location (a
// path ending in .name): the longest name of object that ends the path, as
// a name may itself hold a dot. It is nil when object is not an object or
// has no such property.
func propertyValue(object any, location string) any {
	// The longest name that ends location (a name may hold dots), looked
	// up directly: an object may hold many thousands of properties, each
	// reported on its own.
	for i := 0; i < len(location); i++ {
		if location[i] != '.' {
			continue
		}
		name := location[i+1:]
		switch m := object.(type) {
		case map[string]any:
			if v, ok := m[name]; ok {
				return v
			}
		case map[any]any:
			if v, ok := m[name]; ok {
				return v
			}
		}
	}
	return nil
}

// missingProperty reads the name of the property a huma validation message
// says is missing: a required property (validation.MsgExpectedRequiredProperty)
// or one another property depends on (MsgExpectedDependentRequiredProperty).
func missingProperty(msg string) (string, bool) {
	for _, format := range []string{validation.MsgExpectedRequiredProperty, validation.MsgExpectedDependentRequiredProperty} {
		before, after, _ := strings.Cut(format, "%s")
		after, _, _ = strings.Cut(after, "%s")
		if name, ok := strings.CutPrefix(msg, before); ok {
			if name, _, ok = strings.Cut(name, after); ok && name != "" {
				return name, true
			}
		}
	}
	return "", false
}

func init() {
	huma.NewError = NewError
}
