package contacts

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/storage"
)

// List is a distribution list.
type List struct {
	ID          int64     `db:"id"`
	Name        string    `db:"name"`
	Description string    `db:"description"`
	MemberCount int64     `db:"member_count"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

// Summary is a contact in short: enough to recognise and reach it.
type Summary struct {
	ID           int64          `db:"id"`
	DirectoryID  sql.NullString `db:"directory_id"`
	ExternalID   sql.NullString `db:"external_id"`
	FirstName    string         `db:"first_name"`
	MiddleName   string         `db:"middle_name"`
	LastName     string         `db:"last_name"`
	PrimaryEmail sql.NullString `db:"primary_email"`
	PrimaryPhone sql.NullString `db:"primary_phone"`
}

// ListSortColumns maps the sort properties of the distribution-list listing to SQL.
var ListSortColumns = map[string]string{
	"name":      "lower(l.name)",
	"createdat": "l.created_at",
	"updatedat": "l.updated_at",
	"id":        "l.id",
}

// MemberSortColumns maps the sort properties of a list's recipients to SQL.
// The default, id, reads the members in primary-key order, which stays fast
// for lists of a million.
var MemberSortColumns = map[string]string{
	"id":        "m.person_id",
	"lastname":  "lower(p.last_name)",
	"firstname": "lower(p.first_name)",
}

// listColumns are a list's columns; its member count is kept with its
// members (migration 00302), not counted.
const listColumns = `l.id, l.name, l.description, l.created_at, l.updated_at, l.member_count`

// Lists returns one page of the tenant's distribution lists whose name starts
// with namePrefix (any when empty), and how many match (as
// storage.CountRows counts them).
func Lists(ctx context.Context, db *sqlx.DB, tenant, namePrefix, orderBy string, limit, offset int) ([]List, storage.Total, error) {
	w := "l.tenant_id = $1 AND lower(l.name) LIKE $2"
	args := []any{tenant, likePrefix(lowerTrim(namePrefix))}
	return storage.Page[List](ctx, db, "lists", storage.CountRows("FROM distribution_lists l WHERE "+w),
		fmt.Sprintf("SELECT %s FROM distribution_lists l WHERE %s ORDER BY %s", listColumns, w, orderBy), args, limit, offset)
}

// GetList returns one distribution list, or storage.ErrNotFound.
func GetList(ctx context.Context, db sqlx.QueryerContext, tenant string, id int64) (List, error) {
	return storage.GetOne[List](ctx, db, "get list", "SELECT "+listColumns+" FROM distribution_lists l WHERE l.tenant_id = $1 AND l.id = $2", tenant, id)
}

// Members returns one page of a list's members as summaries, and how many
// there are (as storage.CountRows counts them).
func Members(ctx context.Context, db *sqlx.DB, tenant string, listID int64, orderBy string, limit, offset int) ([]Summary, storage.Total, error) {
	q := fmt.Sprintf(`SELECT p.id, p.directory_id, p.external_id, p.first_name, p.middle_name, p.last_name,
		(SELECT e.address FROM person_emails e WHERE e.person_id = p.id ORDER BY e.id LIMIT 1) AS primary_email,
		(SELECT ph.number FROM person_phones ph WHERE ph.person_id = p.id ORDER BY ph.id LIMIT 1) AS primary_phone
		FROM distribution_list_members m JOIN people p ON p.id = m.person_id
		WHERE m.tenant_id = $1 AND m.list_id = $2 AND p.tenant_id = $1
		ORDER BY %s`, orderBy)
	return storage.Page[Summary](ctx, db, "members",
		storage.CountRows(`FROM distribution_list_members m WHERE m.tenant_id = $1 AND m.list_id = $2`), q, []any{tenant, listID}, limit, offset)
}

// DeleteList deletes a distribution list and its memberships (not the
// contacts), or returns storage.ErrNotFound.
func DeleteList(ctx context.Context, db sqlx.ExecerContext, tenant string, id int64) error {
	return storage.ExecOne(ctx, db, "delete list", `DELETE FROM distribution_lists WHERE tenant_id = $1 AND id = $2`, tenant, id)
}

// ListNameTaken reports whether the tenant has a distribution list named name.
func ListNameTaken(ctx context.Context, db sqlx.QueryerContext, tenant, name string) (bool, error) {
	return storage.GetOne[bool](ctx, db, "look up list name", `SELECT EXISTS (SELECT 1 FROM distribution_lists WHERE tenant_id = $1 AND name = $2)`, tenant, name)
}
