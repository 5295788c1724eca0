// Package model holds the API's request and response models, named as the
// interface documents name them. huma turns each Go type into the schema of
// the same name in the OpenAPI document, so one name is one Go type.
package model

import (
	"github.com/danielgtaylor/huma/v2"
)

// EnumSchema registers a named string enumeration once and returns a
// reference to it. Enum types implement huma.SchemaProvider with it, so each
// appears in the document under its own name.
func EnumSchema(r huma.Registry, name, doc string, values ...string) *huma.Schema {
	if _, ok := r.Map()[name]; !ok {
		enum := make([]any, len(values))
		for i, v := range values {
			enum[i] = v
		}
		r.Map()[name] = &huma.Schema{Type: huma.TypeString, Description: doc, Enum: enum, Examples: []any{values[0]}}
	}
	return &huma.Schema{Ref: "#/components/schemas/" + name}
}
