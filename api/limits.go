package api

import (
	"github.com/danielgtaylor/huma/v2"
)

// Sizes given to request arrays and maps that declare none, so that every
// collection a client sends has a documented and enforced bound.
const (
	defaultMaxItems      = 10000
	defaultMaxProperties = 200
)

// boundRequestSchemas gives every array without maxItems, and every map
// (an object of additional properties) without maxProperties, in the
// request bodies of the document a default bound, and has huma's validation
// messages follow. Models that need another bound declare it on the field.
func boundRequestSchemas(api huma.API) {
	doc := api.OpenAPI()
	reg := doc.Components.Schemas
	seen := map[*huma.Schema]bool{}
	var walk func(s *huma.Schema)
	walk = func(s *huma.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.Ref != "" {
			walk(reg.SchemaFromRef(s.Ref))
			return
		}
		changed := false
		if s.Type == huma.TypeArray && s.MaxItems == nil {
			n := defaultMaxItems
			s.MaxItems, changed = &n, true
		}
		if s.Type == huma.TypeObject && isMap(s) && s.MaxProperties == nil {
			n := defaultMaxProperties
			s.MaxProperties, changed = &n, true
		}
		if changed {
			s.PrecomputeMessages()
		}
		walk(s.Items)
		for _, p := range s.Properties {
			walk(p)
		}
		if ap, ok := s.AdditionalProperties.(*huma.Schema); ok {
			walk(ap)
		}
		for _, group := range [][]*huma.Schema{s.OneOf, s.AnyOf, s.AllOf} {
			for _, sub := range group {
				walk(sub)
			}
		}
	}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Post, item.Put, item.Patch, item.Delete, item.Get} {
			if op == nil || op.RequestBody == nil {
				continue
			}
			for _, mt := range op.RequestBody.Content {
				if mt != nil {
					walk(mt.Schema)
				}
			}
		}
	}
}

// isMap reports whether an object schema takes properties of any name.
func isMap(s *huma.Schema) bool {
	switch ap := s.AdditionalProperties.(type) {
	case *huma.Schema:
		return ap != nil
	case bool:
		return ap
	}
	return len(s.Properties) == 0
}
