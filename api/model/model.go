// Package model holds the API's request and response models, named as the
// interface documents name them. huma turns each Go type into the schema of
// the same name in the OpenAPI document, so one name is one Go type.
//
// Shapes that many models share are declared once, generically: a string
// enumeration's schema (EnumSchema), a page of items (Page, PagedItems,
// ChannelResultsPage) and a counted list (Collection). Each model is still a
// type of its own (type PagedRecipientResponse Page[Recipient]), so it keeps
// its name in the document.
package model

import (
	"fmt"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/rest"
)

// EnumSchema registers the string enumeration T once, under T's own name,
// with its description and values, and returns a reference to it. Enum
// types implement huma.SchemaProvider with it, passing their constants where
// they have them, so each appears in the document under its name.
func EnumSchema[T ~string](r huma.Registry, doc string, values ...T) *huma.Schema {
	t := reflect.TypeFor[T]()
	if t.PkgPath() == "" {
		panic("model.EnumSchema needs a named enumeration type, not " + t.String())
	}
	name := t.Name()
	if _, ok := r.Map()[name]; !ok {
		enum := make([]any, len(values))
		for i, v := range values {
			enum[i] = string(v)
		}
		s := &huma.Schema{Type: huma.TypeString, Description: doc, Enum: enum, Examples: []any{string(values[0])}}
		// huma validates with messages it computes when it builds a
		// schema itself; one put in the registry directly needs them too,
		// or a value outside the enumeration is refused without a word.
		s.PrecomputeMessages()
		r.Map()[name] = s
	}
	return &huma.Schema{Ref: "#/components/schemas/" + name}
}

// valuesAs converts the values of one string enumeration to another's.
func valuesAs[T, S ~string](values []S) []T {
	out := make([]T, len(values))
	for i, v := range values {
		out[i] = T(v)
	}
	return out
}

// Page is a page of items with the paging block inline, as the alerting
// interface answers pages.
type Page[T any] struct {
	rest.Paging
	Items []T `json:"items"`
}

// PagedItems is a page of items with the paging block under "paging", as
// the directory and recipients interfaces answer pages.
type PagedItems[T any] struct {
	Paging rest.Paging `json:"paging"`
	Items  []T         `json:"items"`
}

// ChannelResultsPage is a page of one channel's deliveries with the
// channel's totals.
type ChannelResultsPage[T any] struct {
	rest.Paging
	Totals AggregatedChannelResult `json:"totals"`
	Items  []T                     `json:"items"`
}

// Collection is a whole list of items with their count.
type Collection[T any] struct {
	Items []T `json:"items"`
	Count int `json:"count" example:"1"`
}

// describe gives property name of s, a list of at most n items, the
// description doc, a format that names n (as %d or %[1]d), and, when
// bound, maxItems n: models whose bounds are constants elsewhere document
// them from the constants in their TransformSchema.
func describe(s *huma.Schema, name string, n int, bound bool, doc string) {
	p := s.Properties[name]
	p.Description = fmt.Sprintf(doc, n)
	if bound {
		p.MaxItems = &n
	}
}
