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

// TreeNode is one group of the tenant's group tree with its counts, both
// kept with the group (migrations 00302 and 00641), not counted.
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
	list, count, ok, err := TreeQueries(ctx, db, tenant, f, orderBy)
	if err != nil || !ok {
		return []TreeNode{}, storage.ExactTotal(0), err
	}
	nodes, total, err := storage.Page[TreeNode](ctx, db, "groups", count, list.SQL, list.Args, limit, offset)
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

// TreeQueries returns the statements of a page of the group tree: list
// reads every node f selects in orderBy order (Tree reads a page of it
// with storage.Page) and count counts them (storage.CountRows, with list's
// arguments), so that tests can EXPLAIN exactly what Tree runs. ok is false
// when f cannot match anything (an unknown ancestor).
func TreeQueries(ctx context.Context, db sqlx.QueryerContext, tenant string, f TreeFilter, orderBy string) (list Query, count storage.Count, ok bool, err error) {
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
		if err != nil || !ok {
			return Query{}, storage.Count{}, false, err // an unknown ancestor has nothing below it
		}
		conds = append(conds, "g.path LIKE "+arg(likePrefix(path)), "g.id <> "+arg(*f.AncestorID))
	}
	w := strings.Join(conds, " AND ")
	list = Query{SQL: fmt.Sprintf(`SELECT g.id, g.name, g.description, g.parent_id, g.depth, g.path, g.is_public, g.child_count, g.member_count
		FROM groups g WHERE %s ORDER BY %s`, w, orderBy), Args: args}
	return list, storage.CountRows("FROM groups g WHERE " + w), true, nil
}

// ExplainTree runs the statements of a page of the group tree (TreeQueries)
// under EXPLAIN (ANALYZE, FORMAT JSON) and returns their plans by what they
// read ("page", "count"), so tests can check how many groups each reads.
func ExplainTree(ctx context.Context, db sqlx.QueryerContext, tenant string, f TreeFilter, orderBy string, limit, offset int) (map[string]string, error) {
	list, count, ok, err := TreeQueries(ctx, db, tenant, f, orderBy)
	if err != nil || !ok {
		return nil, err
	}
	var page, counted Query
	page.SQL, page.Args = storage.PageQuery(list.SQL, list.Args, limit, offset)
	counted.SQL, counted.Args = storage.CountQuery(count, list.Args, limit, offset)
	out := map[string]string{}
	for what, q := range map[string]Query{"page": page, "count": counted} {
		if out[what], err = explain(ctx, db, q, "ANALYZE", "FORMAT JSON"); err != nil {
			return nil, err
		}
	}
	return out, nil
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
