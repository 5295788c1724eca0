package rest

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Names of the security schemes in the OpenAPI document.
const (
	SchemeOAuth2 = "Oauth2Scheme"
	SchemeBearer = "JwtBearerTokenScheme"
)

// StreamBody is the huma.Operation Metadata key (value true) of operations
// that read their request body as a stream themselves, such as large
// uploads. The server reads every other body into memory, within the limit,
// before the operation runs.
const StreamBody = "streamBody"

// ImportBody is the huma.Operation Metadata key (value true) of streamed
// operations whose body is a contacts import: its limit is
// TOCSIN_IMPORT_SIZE_LIMIT_BYTES rather than the file limit.
const ImportBody = "importBody"

// NoHead is the huma.Operation Metadata key (value true) of GET operations
// that HEAD must not run: those with an effect (counting a click, sending a
// test event) and those that stream their answer. HEAD on them is a 405.
const NoHead = "noHead"

// SignedBody is the huma.Operation Metadata key (value true) of operations
// whose body is signed and must tell an unsigned caller nothing: the server
// buffers the body but leaves its checks (see Deps.CheckJSONBody) to the
// operation, which makes them once the signature verifies.
const SignedBody = "signedBody"

// JSONParts is the huma.Operation Metadata key of multipart operations
// with text parts holding a JSON document; its value, a
// map[string]*huma.Schema, gives each such part's schema, so that the
// document is checked as a JSON body of that schema is.
const JSONParts = "jsonParts"

// OwnDeadline is the huma.Operation Metadata key (value true) of
// operations that wait for work of a known length (a smoke run, a test
// event's delivery) and bound that wait themselves: the server's request
// timeout (TOCSIN_HTTP_REQUEST_TIMEOUT) does not cut them short.
const OwnDeadline = "ownDeadline"

// Output is the answer of an operation that is only a body.
type Output[T any] struct {
	Body T
}

// Answer is the Output whose body is v.
func Answer[T any](v T) *Output[T] { return &Output[T]{Body: v} }

// Op declares one operation of the API.
type Op struct {
	ID          string
	Method      string
	Path        string
	Summary     string
	Description string
	Tags        []string
	// Scope is the scope a token needs. Empty with Public false means any
	// valid token will do.
	Scope string
	// Public operations need no token.
	Public bool
	// Status is the success status (200 when zero).
	Status int
	// Errors lists the error statuses the operation may answer besides the
	// ones every operation may answer.
	Errors []int
	// MaxBodyBytes overrides the default request body limit of 1 MiB.
	MaxBodyBytes int64
	// Hidden keeps the operation out of the OpenAPI document.
	Hidden bool
	// NoHead keeps HEAD off a GET operation (see the NoHead key).
	NoHead bool
	// SignedBody leaves the checks of the body to the operation (see the
	// SignedBody key).
	SignedBody bool
	// OwnDeadline leaves the bound of the operation's wait to its handler
	// (see the OwnDeadline key).
	OwnDeadline bool
	// Document, when set, completes the operation's OpenAPI description
	// after huma has written it from the input and output types: a body
	// the handler reads itself, a content type other than JSON, a status
	// that is not an error.
	Document func(*huma.Operation)
}

// Area is what the operations of one area of the API share: the scope a
// token needs for them (see Op.Scope and Op.Public) and their tags.
type Area struct {
	Scope  string
	Public bool
	Tags   []string
}

// Op declares an operation of the area answering status (200 when zero)
// and, besides the errors every operation may answer, errs.
func (a Area) Op(id, method, path string, status int, summary, description string, errs ...int) Op {
	return Op{ID: id, Method: method, Path: path, Scope: a.Scope, Public: a.Public, Tags: a.Tags, Status: status,
		Summary: summary, Description: description, Errors: errs}
}

// WithoutHead is o with NoHead set.
func (o Op) WithoutHead() Op {
	o.NoHead = true
	return o
}

// WithOwnDeadline is o with OwnDeadline set.
func (o Op) WithOwnDeadline() Op {
	o.OwnDeadline = true
	return o
}

// DocumentedBy is o with Document set to document.
func (o Op) DocumentedBy(document func(*huma.Operation)) Op {
	o.Document = document
	return o
}

// Operation turns o into a huma.Operation.
func (o Op) Operation() huma.Operation {
	errs := []int{http.StatusBadRequest, http.StatusInternalServerError, http.StatusServiceUnavailable}
	if !o.Public {
		errs = append(errs, http.StatusUnauthorized, http.StatusForbidden)
	}
	if strings.Contains(o.Path, "{") {
		errs = append(errs, http.StatusNotFound)
	}
	errs = append(errs, o.Errors...)
	op := huma.Operation{
		OperationID:   o.ID,
		Method:        o.Method,
		Path:          o.Path,
		Summary:       o.Summary,
		Description:   o.Description,
		Tags:          o.Tags,
		DefaultStatus: o.Status,
		Errors:        dedupe(errs),
		MaxBodyBytes:  o.MaxBodyBytes,
		Hidden:        o.Hidden,
	}
	if op.Summary == "" {
		op.Summary = o.ID
	}
	if o.NoHead || o.SignedBody || o.OwnDeadline || !o.Public {
		op.Metadata = map[string]any{}
	}
	if o.OwnDeadline {
		op.Metadata[OwnDeadline] = true
	}
	if o.NoHead {
		op.Metadata[NoHead] = true
	}
	if o.SignedBody {
		op.Metadata[SignedBody] = true
	}
	if !o.Public {
		scopes := []string{}
		if o.Scope != "" {
			scopes = []string{o.Scope}
		}
		op.Security = []map[string][]string{{SchemeBearer: scopes}, {SchemeOAuth2: scopes}}
		op.Metadata["scope"] = o.Scope
	}
	return op
}

func dedupe(s []int) []int {
	seen := map[int]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// Register adds the operation o with handler h to api.
func Register[I, O any](api huma.API, o Op, h func(context.Context, *I) (*O, error)) {
	RegisterOperation(api, o.Operation(), o.Document, h)
}

// RegisterOperation adds op with handler h to api, then lets document
// complete its OpenAPI description (see Op.Document); document may be nil.
func RegisterOperation[I, O any](api huma.API, op huma.Operation, document func(*huma.Operation), h func(context.Context, *I) (*O, error)) {
	huma.Register(api, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, TimedOut(err)
		}
		return out, err
	})
	if document != nil {
		document(documented(api.OpenAPI().Paths[op.Path], op.Method))
	}
}

// documented is the operation of item for method.
func documented(item *huma.PathItem, method string) *huma.Operation {
	return map[string]*huma.Operation{
		http.MethodGet: item.Get, http.MethodPost: item.Post, http.MethodPut: item.Put,
		http.MethodPatch: item.Patch, http.MethodDelete: item.Delete,
	}[method]
}
