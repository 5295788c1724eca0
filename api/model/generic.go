package model

import (
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// ResponseStatus is the outcome an ApiResponse reports.
type ResponseStatus string

// Schema implements huma.SchemaProvider.
func (ResponseStatus) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[ResponseStatus](r, "Success: everything was done. Warning: done, with messages worth reading. Error: not done.",
		"Success", "Warning", "Error")
}

// ResponseMessage is one message of an ApiResponse.
type ResponseMessage struct {
	Code     string `json:"code" doc:"A stable machine-readable code." example:"recipients.none"`
	Message  string `json:"message" doc:"The message for people." example:"The alert has no recipients."`
	Severity string `json:"severity" enum:"Info,Warning,Error" example:"Warning"`
}

// ApiResponse reports the outcome of an operation that has no other result.
type ApiResponse struct {
	Status   ResponseStatus    `json:"status"`
	Messages []ResponseMessage `json:"messages,omitempty"`
}

// BasicMessage is a plain message.
type BasicMessage struct {
	Message string `json:"message" example:"ok"`
}

// ClientRequestContext describes the caller of a request as tocsin sees it.
type ClientRequestContext struct {
	RequestID string   `json:"requestId,omitempty" doc:"The request id, also in the X-Request-ID response header."`
	TenantID  string   `json:"tenantId" doc:"The tenant of the token." example:"1001"`
	UserID    string   `json:"userId" doc:"The token's subject." example:"alice"`
	Scopes    []string `json:"scopes" doc:"The scopes the token grants." example:"[\"tamarack\"]"`
}

// ErrorResponse is the error body of the alerting, file and subscription
// interfaces. tocsin answers every error with the same RFC 9457 shape as
// ProblemDetails.
type ErrorResponse rest.ProblemDetails

// BadRequestResponse is the 400 body of the directory interface, the same
// RFC 9457 shape as ProblemDetails.
type BadRequestResponse rest.ProblemDetails

// BadRequestErrorMessage is one failing field of a BadRequestResponse, the
// same shape as ValidationFailure.
type BadRequestErrorMessage rest.ValidationFailure

// PagedApiResponse is the paging block of paged responses (camelCase).
type PagedApiResponse rest.Paging

// PagedApiPascalResponse is the same paging block with PascalCase names, as
// some clients of the interface expect.
type PagedApiPascalResponse struct {
	Page       int   `json:"Page" example:"1"`
	PageSize   int   `json:"PageSize" example:"25"`
	TotalCount int64 `json:"TotalCount" example:"1"`
	TotalPages int64 `json:"TotalPages" example:"1"`
	// TotalCountExact says whether TotalCount is exact, as totalCountExact
	// does in PagedApiResponse.
	TotalCountExact bool `json:"TotalCountExact" example:"true"`
}

// FormType is the kind of value a Field holds.
type FormType string

// Schema implements huma.SchemaProvider.
func (FormType) Schema(r huma.Registry) *huma.Schema {
	return EnumSchema[FormType](r, "The kind of value a field holds.", "Text", "Number", "Date", "Boolean", "Select")
}

// Field is a named value with its kind, such as a contact's custom field.
type Field struct {
	Name    string   `json:"name" maxLength:"100" example:"badgeNumber"`
	Type    FormType `json:"type"`
	Value   string   `json:"value" maxLength:"1000" example:"A-1234"`
	Options []string `json:"options,omitempty" doc:"The allowed values of a Select field."`
}

// ObjectReference points at a resource of a given type.
type ObjectReference struct {
	Type string `json:"type" enum:"Contact,Group,DistributionList,Alert,File,User" example:"Group"`
	ID   string `json:"id" example:"42"`
	Name string `json:"name,omitempty" example:"Facilities team"`
}

// Association links two resources, such as a contact and a group.
type Association struct {
	From ObjectReference `json:"from"`
	To   ObjectReference `json:"to"`
	Kind string          `json:"kind" enum:"MemberOf,Owns,RelatedTo" example:"MemberOf"`
}

// RegisterGeneric adds the generic models that no operation names to the
// document, so every model of the interface documents is described.
func RegisterGeneric(api huma.API) {
	reg := api.OpenAPI().Components.Schemas
	for _, v := range []any{
		ApiResponse{}, BasicMessage{}, ErrorResponse{}, BadRequestResponse{}, BadRequestErrorMessage{},
		PagedApiResponse{}, PagedApiPascalResponse{}, Field{}, Association{}, rest.ValidationFailure{},
	} {
		reg.Schema(reflect.TypeOf(v), true, "")
	}
}
