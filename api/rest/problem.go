// Package rest holds what every tocsin operation shares: RFC 9457 problem
// responses, the caller's principal, paging and sorting, and the declaration
// of operations with their scopes.
package rest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
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
	Errors   []ValidationFailure `json:"errors,omitempty" doc:"For validation problems, one entry per failing field."`

	headers http.Header
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

// Unavailable is a 503 problem naming the dependency that did not answer.
func Unavailable(dependency string, err error) *ProblemDetails {
	return Problem(http.StatusServiceUnavailable, fmt.Sprintf("%s is unavailable: %v", dependency, err)).
		WithHeader("Retry-After", "5")
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
	for _, err := range errs {
		if err == nil {
			continue
		}
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			det := d.ErrorDetail()
			_, field, _ := strings.Cut(det.Location, ".")
			p.Errors = append(p.Errors, ValidationFailure{
				PropertyName:   field,
				Location:       det.Location,
				ErrorMessage:   det.Message,
				AttemptedValue: det.Value,
			})
			continue
		}
		p.Errors = append(p.Errors, ValidationFailure{ErrorMessage: err.Error()})
	}
	if len(p.Errors) > 0 && status == http.StatusBadRequest && p.Detail == "" {
		p.Detail = "validation failed"
	}
	return p
}

func init() {
	huma.NewError = NewError
}
