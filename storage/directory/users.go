// Package directory keeps the user directory in PostgreSQL: directory users
// (rows of people with a directory_id), their emails, phones, devices,
// locations, group memberships, weather subscriptions, the group tree and the
// verification of addresses. Every query filters on the tenant.
package directory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/storage"
)

// Querier is what reads and writes need: the database or a transaction.
type Querier interface {
	sqlx.ExtContext
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// User is the stored base information of a directory user.
type User struct {
	ID          int64          `db:"id"`
	DirectoryID string         `db:"directory_id"`
	ExternalID  sql.NullString `db:"external_id"`
	Profile
	SelfService json.RawMessage `db:"self_service"`
	MobileApps  json.RawMessage `db:"mobile_apps"`
	CreatedAt   time.Time       `db:"created_at"`
	UpdatedAt   time.Time       `db:"updated_at"`
}

// NewUser is what creating or updating a user writes.
type NewUser struct {
	ExternalID string
	Profile
	SelfService SelfService
	MobileApps  []MobileApp
}

// ParseID turns a path id into a row id (ids.Parse); anything else is
// ErrNotFound.
func ParseID(s string) (int64, error) {
	id, ok := ids.Parse(s)
	if !ok {
		return 0, storage.ErrNotFound
	}
	return id, nil
}

const userCols = `id, directory_id, external_id, first_name, middle_name, last_name, language, time_zone,
	self_service, mobile_apps, created_at, updated_at`

// CreateUser inserts a user and returns its id. A duplicate external id
// within the directory is ErrConflict.
func CreateUser(ctx context.Context, tx *sqlx.Tx, tenant, dir string, u NewUser) (int64, error) {
	ss, _ := json.Marshal(u.SelfService)
	apps, _ := json.Marshal(nonNil(u.MobileApps))
	var id int64
	err := tx.GetContext(ctx, &id, `
		INSERT INTO people (tenant_id, directory_id, external_id, first_name, middle_name, last_name, language, time_zone, self_service, mobile_apps)
		VALUES ($1, $2, NULLIF($3, ''), $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		tenant, dir, u.ExternalID, u.FirstName, u.MiddleName, u.LastName, u.Language, u.TimeZone, ss, apps)
	if storage.IsUniqueViolation(err, "people_tenant_directory_external") {
		return 0, storage.ErrConflict
	}
	if err != nil {
		return 0, fmt.Errorf("insert user: %w", err)
	}
	if err := syncAppDevices(ctx, tx, tenant, id, u.MobileApps); err != nil {
		return 0, err
	}
	return id, nil
}

// syncAppDevices makes the user's MyAlertsApp devices those of its app
// registrations with a push token. A token registered to someone else is
// ErrConflict; more devices than before and past
// storage.MaxDevicesPerPerson (push devices included) a
// *storage.LimitError. As many devices as before or fewer pass, so a user
// given more devices before the limit existed can still change their apps.
func syncAppDevices(ctx context.Context, tx *sqlx.Tx, tenant string, person int64, apps []MobileApp) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM person_devices WHERE tenant_id = $1 AND person_id = $2 AND app = 'myalerts'`, tenant, person)
	if err != nil {
		return fmt.Errorf("clear app devices: %w", err)
	}
	removed, _ := res.RowsAffected()
	var added int64
	for _, a := range apps {
		if a.PushToken == "" {
			continue
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO person_devices (tenant_id, person_id, app, platform, token) VALUES ($1, $2, 'myalerts', $3, $4)`,
			tenant, person, a.Platform, a.PushToken)
		if storage.IsUniqueViolation(err, "") {
			return storage.ErrConflict
		}
		if err != nil {
			return fmt.Errorf("insert app device: %w", err)
		}
		added++
	}
	if added <= removed {
		return nil
	}
	return deviceLimit.check(ctx, tx, tenant, person)
}

// GetUser reads a user of the directory; ErrNotFound when there is none.
func GetUser(ctx context.Context, q Querier, tenant, dir string, id int64) (User, error) {
	return storage.GetOne[User](ctx, q, "read user", `SELECT `+userCols+` FROM people WHERE tenant_id = $1 AND directory_id = $2 AND id = $3`, tenant, dir, id)
}

// LockUser checks the user exists and locks its row for the transaction.
func LockUser(ctx context.Context, tx *sqlx.Tx, tenant, dir string, id int64) (User, error) {
	return storage.GetOne[User](ctx, tx, "lock user", `SELECT `+userCols+` FROM people WHERE tenant_id = $1 AND directory_id = $2 AND id = $3 FOR UPDATE`, tenant, dir, id)
}

// UpdateUser replaces the base information. apps nil leaves the mobile apps as they are.
func UpdateUser(ctx context.Context, tx *sqlx.Tx, tenant string, id int64, u NewUser, apps []MobileApp, setApps bool) error {
	ss, _ := json.Marshal(u.SelfService)
	_, err := tx.ExecContext(ctx, `
		UPDATE people SET first_name = $3, middle_name = $4, last_name = $5, language = $6, time_zone = $7, self_service = $8, updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenant, id, u.FirstName, u.MiddleName, u.LastName, u.Language, u.TimeZone, ss)
	if err != nil {
		return fmt.Errorf("update user: %w", err)
	}
	if !setApps {
		return nil
	}
	b, _ := json.Marshal(nonNil(apps))
	if _, err := tx.ExecContext(ctx, `UPDATE people SET mobile_apps = $3 WHERE tenant_id = $1 AND id = $2`, tenant, id, b); err != nil {
		return fmt.Errorf("update mobile apps: %w", err)
	}
	return syncAppDevices(ctx, tx, tenant, id, apps)
}

// DeleteUser removes a user and, by cascade, everything that hangs off it.
func DeleteUser(ctx context.Context, q Querier, tenant, dir string, id int64) error {
	return storage.ExecOne(ctx, q, "delete user", `DELETE FROM people WHERE tenant_id = $1 AND directory_id = $2 AND id = $3`, tenant, dir, id)
}

// SetExternalID associates externalID with the user; another user of the
// directory with it is ErrConflict.
func SetExternalID(ctx context.Context, q Querier, tenant, dir string, id int64, externalID string) error {
	err := storage.ExecOne(ctx, q, "set external id", `UPDATE people SET external_id = $4, updated_at = now() WHERE tenant_id = $1 AND directory_id = $2 AND id = $3`,
		tenant, dir, id, externalID)
	if storage.IsUniqueViolation(err, "people_tenant_directory_external") {
		return storage.ErrConflict
	}
	return err
}

// UserSorts maps the sortable properties of users to SQL.
var UserSorts = map[string]string{
	"id": "p.id", "lastname": "lower(p.last_name)", "firstname": "lower(p.first_name)",
	"externalid": "p.external_id NULLS LAST", "createdat": "p.created_at", "updatedat": "p.updated_at",
}

// UserFilter is a parsed FindUserQuery.
type UserFilter struct {
	Name, Email, Phone, ExternalID string
	GroupID                        int64
}

// FindUsers returns a page of the directory's users matching f, in order,
// and how many match (as storage.CountRows counts them).
func FindUsers(ctx context.Context, q Querier, tenant, dir string, f UserFilter, order string, limit, offset int) ([]UserSummary, storage.Total, error) {
	where := []string{"p.tenant_id = $1", "p.directory_id = $2"}
	args := []any{tenant, dir}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Name != "" {
		add(`(p.first_name || ' ' || p.middle_name || ' ' || p.last_name || ' ' || p.first_name || ' ' || p.last_name) ILIKE ?`, "%"+likeEscape(f.Name)+"%")
	}
	if f.Email != "" {
		add(`EXISTS (SELECT 1 FROM person_emails e WHERE e.tenant_id = p.tenant_id AND e.person_id = p.id AND e.address = ?)`, strings.ToLower(f.Email))
	}
	if f.Phone != "" {
		add(`EXISTS (SELECT 1 FROM person_phones ph WHERE ph.tenant_id = p.tenant_id AND ph.person_id = p.id AND ph.number = ?)`, f.Phone)
	}
	if f.ExternalID != "" {
		add(`p.external_id = ?`, f.ExternalID)
	}
	if f.GroupID != 0 {
		add(`EXISTS (SELECT 1 FROM group_memberships m WHERE m.tenant_id = p.tenant_id AND m.person_id = p.id AND m.group_id = ?)`, f.GroupID)
	}
	return pageUsers(ctx, q, strings.Join(where, " AND "), args, order, limit, offset)
}

// GroupMembers returns a page of a group's direct members that belong to the
// directory and show in group directories, and how many there are (as
// storage.CountRows counts them).
func GroupMembers(ctx context.Context, q Querier, tenant, dir string, group int64, order string, limit, offset int) ([]UserSummary, storage.Total, error) {
	where := `p.tenant_id = $1 AND p.directory_id = $2
		AND EXISTS (SELECT 1 FROM group_memberships m WHERE m.tenant_id = p.tenant_id AND m.person_id = p.id AND m.group_id = $3)
		AND coalesce((p.self_service->>'showInGroupDirectory')::boolean, true)`
	return pageUsers(ctx, q, where, []any{tenant, dir, group}, order, limit, offset)
}

func pageUsers(ctx context.Context, q Querier, where string, args []any, order string, limit, offset int) ([]UserSummary, storage.Total, error) {
	rows, total, err := storage.Page[struct {
		User
		Emails pq.StringArray `db:"emails"`
		Phones pq.StringArray `db:"phones"`
	}](ctx, q, "users", storage.CountRows(`FROM people p WHERE `+where), `
		SELECT p.id, p.directory_id, p.external_id, p.first_name, p.middle_name, p.last_name, p.language, p.time_zone,
			p.self_service, p.mobile_apps, p.created_at, p.updated_at,
			ARRAY(SELECT e.address FROM person_emails e WHERE e.tenant_id = p.tenant_id AND e.person_id = p.id ORDER BY e.id) AS emails,
			ARRAY(SELECT ph.number FROM person_phones ph WHERE ph.tenant_id = p.tenant_id AND ph.person_id = p.id ORDER BY ph.id) AS phones
		FROM people p WHERE `+where+` ORDER BY `+order, args, limit, offset)
	if err != nil {
		return nil, storage.Total{}, err
	}
	out := make([]UserSummary, 0, len(rows))
	for _, r := range rows {
		out = append(out, UserSummary{
			ID: r.ID, ExternalID: r.ExternalID.String,
			Profile: r.Profile,
			Emails:  nonNil([]string(r.Emails)), Phones: nonNil([]string(r.Phones)), CreatedAt: r.CreatedAt,
		})
	}
	return out, total, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
