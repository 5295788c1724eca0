package directory

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// groupSelect reads groups as Group columns: the names path is built
// from the ancestor ids in groups.path; the member count is kept with the
// memberships (migration 00302), not counted.
const groupSelect = `
	SELECT g.id, g.name, g.description, g.parent_id, g.depth, g.is_public, g.created_at,
		coalesce((SELECT string_agg(a.name, ' / ' ORDER BY a.depth) FROM groups a
			WHERE a.tenant_id = g.tenant_id AND a.id = ANY (string_to_array(trim(both '/' from g.path), '/')::bigint[])), g.name) AS names,
		g.member_count
	FROM groups g`

type groupRow struct {
	ID          int64         `db:"id"`
	Name        string        `db:"name"`
	Description string        `db:"description"`
	ParentID    sql.NullInt64 `db:"parent_id"`
	Depth       int           `db:"depth"`
	IsPublic    bool          `db:"is_public"`
	Names       string        `db:"names"`
	MemberCount int64         `db:"member_count"`
	CreatedAt   time.Time     `db:"created_at"`
}

func (r groupRow) group() Group {
	g := Group{ID: r.ID, Name: r.Name, Description: r.Description, Path: r.Names, Depth: r.Depth, IsPublic: r.IsPublic, MemberCount: r.MemberCount}
	if r.ParentID.Valid {
		p := r.ParentID.Int64
		g.ParentID = &p
	}
	return g
}

// ErrParentNotFound is returned when a new group's parent does not exist.
var ErrParentNotFound = fmt.Errorf("parent group: %w", storage.ErrNotFound)

// Limits of the group tree. Every group's path (its ancestors' names and
// its own, joined by " / ") is repeated in each row that lists it, so the
// depth and the length of that path bound what a page of groups can weigh.
const (
	// MaxGroupDepth is how many levels the tree has at most: root groups
	// are depth 0, the deepest groups depth MaxGroupDepth-1.
	MaxGroupDepth = 32
	// MaxGroupPathLength is the most characters a group's path may have.
	MaxGroupPathLength = 1000
)

// groupPathSeparator joins the names of a group's path.
const groupPathSeparator = " / "

// ErrGroupTooDeep is returned when a new group would be deeper than
// MaxGroupDepth levels.
var ErrGroupTooDeep = fmt.Errorf("the group tree is at most %d levels deep", MaxGroupDepth)

// GroupPathTooLongError is returned when a new group's path would be longer
// than MaxGroupPathLength characters.
type GroupPathTooLongError struct {
	// Length is the path's length in characters.
	Length int
}

func (e *GroupPathTooLongError) Error() string {
	return fmt.Sprintf("the group's path would be %d characters, more than %d", e.Length, MaxGroupPathLength)
}

// CreateGroup adds a group under parent (a root group when parent is 0),
// maintaining its materialised path and depth. A sibling with the same name
// is ErrConflict; a group below MaxGroupDepth levels is ErrGroupTooDeep and
// one whose path would be too long a *GroupPathTooLongError. The parent
// is locked as the insert's trigger updates it (its child_count): groups
// created under one parent at once take turns rather than each holding a
// lock the other's update waits for.
func CreateGroup(ctx context.Context, tx *sqlx.Tx, tenant, name, description string, parent int64, public bool) (Group, error) {
	parentPath, depth := "/", 0
	pathLength := utf8.RuneCountInString(name)
	var parentID *int64
	if parent != 0 {
		var p struct {
			Path        string `db:"path"`
			Depth       int    `db:"depth"`
			NamesLength int    `db:"names_length"`
		}
		if err := tx.GetContext(ctx, &p, `
			SELECT p.path, p.depth,
				(SELECT coalesce(sum(char_length(a.name)), 0) FROM groups a
					WHERE a.tenant_id = p.tenant_id AND a.id = ANY (string_to_array(trim(both '/' from p.path), '/')::bigint[])) AS names_length
			FROM groups p WHERE p.tenant_id = $1 AND p.id = $2 FOR NO KEY UPDATE OF p`, tenant, parent); err != nil {
			if storage.NotFound(err) == storage.ErrNotFound {
				return Group{}, ErrParentNotFound
			}
			return Group{}, fmt.Errorf("read parent group: %w", err)
		}
		parentPath, depth, parentID = p.Path, p.Depth+1, &parent
		if depth >= MaxGroupDepth {
			return Group{}, ErrGroupTooDeep
		}
		pathLength += p.NamesLength + depth*utf8.RuneCountInString(groupPathSeparator)
	}
	if pathLength > MaxGroupPathLength {
		return Group{}, &GroupPathTooLongError{Length: pathLength}
	}
	var id int64
	err := tx.GetContext(ctx, &id, `
		INSERT INTO groups (tenant_id, parent_id, name, description, is_public, depth) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		tenant, parentID, name, description, public, depth)
	if storage.IsUniqueViolation(err, "groups_tenant_parent_name") {
		return Group{}, storage.ErrConflict
	}
	if err != nil {
		return Group{}, fmt.Errorf("insert group: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE groups SET path = $3 WHERE tenant_id = $1 AND id = $2`,
		tenant, id, parentPath+strconv.FormatInt(id, 10)+"/"); err != nil {
		return Group{}, fmt.Errorf("set group path: %w", err)
	}
	return GetGroup(ctx, tx, tenant, id)
}

// GetGroup reads one group of the tenant.
func GetGroup(ctx context.Context, q Querier, tenant string, id int64) (Group, error) {
	r, err := storage.GetOne[groupRow](ctx, q, "read group", groupSelect+` WHERE g.tenant_id = $1 AND g.id = $2`, tenant, id)
	return r.group(), err
}

// GroupSorts maps the sortable properties of groups to SQL.
var GroupSorts = map[string]string{
	"id": "g.id", "name": "lower(g.name)", "path": "names", "depth": "g.depth", "createdat": "g.created_at",
}

// GroupFilter is a parsed FindGroupQuery.
type GroupFilter struct {
	Name         string
	ParentID     int64
	AncestorID   int64
	RootsOnly    bool
	IsPublic     *bool
	MemberUserID int64
	// NotMemberOf excludes groups this person is a direct member of.
	NotMemberOf int64
}

func groupWhere(tenant string, f GroupFilter) (string, []any) {
	where := []string{"g.tenant_id = $1"}
	args := []any{tenant}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Name != "" {
		add("g.name ILIKE ?", "%"+likeEscape(f.Name)+"%")
	}
	if f.ParentID != 0 {
		add("g.parent_id = ?", f.ParentID)
	}
	if f.AncestorID != 0 {
		add("g.path LIKE (SELECT a.path FROM groups a WHERE a.tenant_id = g.tenant_id AND a.id = ?) || '_%'", f.AncestorID)
	}
	if f.RootsOnly {
		where = append(where, "g.parent_id IS NULL")
	}
	if f.IsPublic != nil {
		add("g.is_public = ?", *f.IsPublic)
	}
	if f.MemberUserID != 0 {
		add("EXISTS (SELECT 1 FROM group_memberships m WHERE m.tenant_id = g.tenant_id AND m.group_id = g.id AND m.person_id = ?)", f.MemberUserID)
	}
	if f.NotMemberOf != 0 {
		add("NOT EXISTS (SELECT 1 FROM group_memberships m WHERE m.tenant_id = g.tenant_id AND m.group_id = g.id AND m.person_id = ?)", f.NotMemberOf)
	}
	return strings.Join(where, " AND "), args
}

func findGroups(ctx context.Context, q Querier, tenant string, f GroupFilter, order string, limit, offset int) ([]groupRow, storage.Total, error) {
	where, args := groupWhere(tenant, f)
	return storage.Page[groupRow](ctx, q, "groups", storage.CountRows(`FROM groups g WHERE `+where),
		`SELECT * FROM (`+groupSelect+` WHERE `+where+`) g ORDER BY `+strings.ReplaceAll(order, "g.", ""), args, limit, offset)
}

// FindGroups returns a page of the tenant's groups matching f and how many
// match (as storage.CountRows counts them).
func FindGroups(ctx context.Context, q Querier, tenant string, f GroupFilter, order string, limit, offset int) ([]Group, storage.Total, error) {
	rows, total, err := findGroups(ctx, q, tenant, f, order, limit, offset)
	out := make([]Group, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.group())
	}
	return out, total, err
}

// GroupIsPublic reports whether the tenant's group exists (ErrNotFound
// otherwise) and is public.
func GroupIsPublic(ctx context.Context, q Querier, tenant string, id int64) (bool, error) {
	return storage.GetOne[bool](ctx, q, "read group", `SELECT is_public FROM groups WHERE tenant_id = $1 AND id = $2`, tenant, id)
}

// AddMembership makes the person a direct member of the group; it reports
// false when it already was. A membership past storage.MaxGroupsPerPerson
// is a *storage.LimitError.
func AddMembership(ctx context.Context, q Querier, tenant string, group, person int64) (bool, error) {
	res, err := q.ExecContext(ctx, `INSERT INTO group_memberships (tenant_id, group_id, person_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		tenant, group, person)
	if err != nil {
		return false, fmt.Errorf("insert membership: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	return true, groupLimit.check(ctx, q, tenant, person)
}

// RemoveMembership ends a direct membership; ErrNotFound when there was none.
func RemoveMembership(ctx context.Context, q Querier, tenant string, group, person int64) error {
	return storage.ExecOne(ctx, q, "delete membership", `DELETE FROM group_memberships WHERE tenant_id = $1 AND group_id = $2 AND person_id = $3`, tenant, group, person)
}

// Memberships lists the groups the person is a direct member of, by path,
// and how many they are. AddMembership keeps them within
// storage.MaxGroupsPerPerson, and no more are read: a person given more
// before that limit existed has the first of them listed, and total
// counts them all (up to storage.CountLimit, many more than the limit).
func Memberships(ctx context.Context, q Querier, tenant string, person int64) (groups []Group, total int64, err error) {
	groups, t, err := FindGroups(ctx, q, tenant, GroupFilter{MemberUserID: person}, "names, id", storage.MaxGroupsPerPerson, 0)
	return groups, t.N, err
}
