package recipients

import (
	"context"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/api/model"
	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage/contacts"
)

const groupTreeDescription = `Returns one page of the tenant's groups (the directory's groups) as
GroupTreeNode objects with their child and member counts. Filters: parentId
(the children of a group), depth (0 for root groups), ancestorId (every group
below a group); together they must all match. Sort properties: path (the
default: each group right after its parent, subtrees kept together), name,
depth, id.`

// optionalInt is an integer query parameter that may be absent, so that 0
// can be asked for (depth=0).
type optionalInt struct {
	Value int64
	Set   bool
}

// Schema implements huma.SchemaProvider.
func (optionalInt) Schema(huma.Registry) *huma.Schema {
	zero := 0.0
	return &huma.Schema{Type: huma.TypeInteger, Format: "int64", Minimum: &zero}
}

// Receiver implements huma.ParamWrapper.
func (o *optionalInt) Receiver() reflect.Value { return reflect.ValueOf(o).Elem().Field(0) }

// OnParamSet implements huma.ParamReactor.
func (o *optionalInt) OnParamSet(isSet bool, _ any) { o.Set = isSet }

func (o optionalInt) ptr() *int64 {
	if !o.Set {
		return nil
	}
	v := o.Value
	return &v
}

type groupTreeInput struct {
	rest.PageParams
	ParentID   optionalInt `query:"parentId" doc:"Only the children of this group."`
	Depth      optionalInt `query:"depth" doc:"Only groups at this depth; 0 for root groups."`
	AncestorID optionalInt `query:"ancestorId" doc:"Only groups below this group, at any depth."`
}

func (h *handlers) groupTree(ctx context.Context, in *groupTreeInput) (*rest.Output[model.PagedGroupTreeNodeResponse], error) {
	order, err := rest.OrderBy(in.Sort, contacts.TreeSortColumns, contacts.TreeDefaultOrder, contacts.TreeTieBreak)
	if err != nil {
		return nil, err
	}
	f := contacts.TreeFilter{ParentID: in.ParentID.ptr(), AncestorID: in.AncestorID.ptr()}
	if in.Depth.Set {
		if in.Depth.Value > 1000 {
			return nil, rest.Invalid("query", "depth", "at most 1000", in.Depth.Value)
		}
		d := int(in.Depth.Value)
		f.Depth = &d
	}
	nodes, total, err := contacts.Tree(ctx, h.d.DB.DB, rest.Tenant(ctx), f, order, in.Limit(), in.Offset())
	if err != nil {
		return nil, h.failure(ctx, err)
	}
	out := &rest.Output[model.PagedGroupTreeNodeResponse]{Body: model.PagedGroupTreeNodeResponse{Paging: rest.NewPaging(in.PageParams, total), Items: make([]model.GroupTreeNode, len(nodes))}}
	for i, n := range nodes {
		out.Body.Items[i] = model.GroupTreeNode{
			ID: n.ID, Name: n.Name, Description: n.Description, ParentID: n.ParentID, Depth: n.Depth,
			Path: n.Path, IDPath: n.IDPath, IsPublic: n.IsPublic, ChildCount: n.ChildCount, MemberCount: n.MemberCount,
		}
	}
	return out, nil
}
