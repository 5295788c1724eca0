package contacts

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// TreeNode is one group of the tenant's group tree with its counts.
type TreeNode struct {
	ID          int64  `db:"id"`
	Name        string `db:"name"`
	Description string `db:"description"`
	ParentID    *int64 `db:"parent_id"`
	Depth       int    `db:"depth"`
	IDPath      string `db:"path"`
	IsPublic    bool   `db:"is_public"`
	ChildCount  int64  `db:"child_count"`
	MemberCount int64  `db:"member_count"`
	// Path is the names from the root to the group, joined by " / ".
	Path string
}

// TreeFilter selects nodes of the group tree. Zero fields do not filter.
type TreeFilter struct {
	// ParentID selects the children of a group.
	ParentID *int64
	// Depth selects the groups at a depth (0 for root groups).
	Depth *int
	// AncestorID selects every group below a group (not the group itself).
	AncestorID *int64
}

// TreeSortColumns maps the sort properties of getGroupTreeNodes to SQL.
var TreeSortColumns = map[string]string{
	"name":  "lower(g.name)",
	"depth": "g.depth",
	"path":  "g.path",
	"id":    "g.id",
}

// Default order and tie-break of the group tree: the materialized path keeps
// every subtree together, each group right after its parent.
const (
	TreeDefaultOrder = "g.path"
	TreeTieBreak     = "g.id"
)

// Tree returns one page of group-tree nodes and how many match (as
// storage.CountRows counts them).
func Tree(ctx context.Context, db *sqlx.DB, tenant string, f TreeFilter, orderBy string, limit, offset int) ([]TreeNode, storage.Total, error) {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	conds := []string{"g.tenant_id = $1"}
	if f.ParentID != nil {
		conds = append(conds, "g.parent_id = "+arg(*f.ParentID))
	}
	if f.Depth != nil {
		conds = append(conds, "g.depth = "+arg(*f.Depth))
	}
	if f.AncestorID != nil {
		path, ok, err := lookUpPath(ctx, db, tenant, *f.AncestorID)
		if err != nil {
			return nil, storage.Total{}, err
		}
		if !ok {
			return []TreeNode{}, storage.ExactTotal(0), nil // an unknown ancestor has nothing below it
		}
		conds = append(conds, "g.path LIKE "+arg(likePrefix(path)), "g.id <> "+arg(*f.AncestorID))
	}
	w := strings.Join(conds, " AND ")
	q := fmt.Sprintf(`SELECT g.id, g.name, g.description, g.parent_id, g.depth, g.path, g.is_public,
		(SELECT count(*) FROM groups c WHERE c.tenant_id = g.tenant_id AND c.parent_id = g.id) AS child_count,
		g.member_count
		FROM groups g WHERE %s ORDER BY %s`, w, orderBy)
	nodes, total, err := storage.Page[TreeNode](ctx, db, "groups", storage.CountRows("FROM groups g WHERE "+w), q, args, limit, offset)
	if err != nil {
		return nil, storage.Total{}, err
	}
	paths := make([]string, len(nodes))
	for i, n := range nodes {
		paths[i] = n.IDPath
	}
	names, err := pathNames(ctx, db, tenant, paths)
	if err != nil {
		return nil, storage.Total{}, err
	}
	for i := range nodes {
		nodes[i].Path = names[nodes[i].IDPath]
		if nodes[i].Path == "" {
			nodes[i].Path = nodes[i].Name
		}
	}
	return nodes, total, nil
}

// pathNames turns materialized id paths ("/1/5/9/") into name paths
// ("Campus / Facilities / Night shift") with one query for all ancestors.
func pathNames(ctx context.Context, db sqlx.QueryerContext, tenant string, paths []string) (map[string]string, error) {
	idSet := map[int64]bool{}
	split := map[string][]int64{}
	for _, p := range paths {
		if _, done := split[p]; done {
			continue
		}
		var ids []int64
		for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil {
				ids = append(ids, id)
				idSet[id] = true
			}
		}
		split[p] = ids
	}
	out := map[string]string{}
	if len(idSet) == 0 {
		return out, nil
	}
	all := make(pq.Int64Array, 0, len(idSet))
	for id := range idSet {
		all = append(all, id)
	}
	rows, err := db.QueryxContext(ctx, `SELECT id, name FROM groups WHERE tenant_id = $1 AND id = ANY($2)`, tenant, all)
	if err != nil {
		return nil, fmt.Errorf("load group names: %w", err)
	}
	defer rows.Close()
	names := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("load group names: %w", err)
		}
		names[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load group names: %w", err)
	}
	for p, ids := range split {
		parts := make([]string, 0, len(ids))
		for _, id := range ids {
			if n, ok := names[id]; ok {
				parts = append(parts, n)
			}
		}
		out[p] = strings.Join(parts, " / ")
	}
	return out, nil
}
