// Package contacts stores the recipient sources alerts resolve: contacts
// (the people table, shared with the directory), distribution lists and
// their CSV imports and exports, and the group tree. Every query filters on
// the tenant and is written so that a tenant with a million contacts is
// served from indexes (see the EXPLAIN test and the README).
package contacts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tocsin/tocsin/storage"
)

// Person is one contact with everything that reaches it.
type Person struct {
	ID          int64          `db:"id"`
	DirectoryID sql.NullString `db:"directory_id"`
	ExternalID  sql.NullString `db:"external_id"`
	storage.Profile
	Roles        pq.StringArray `db:"roles"`
	ChatUsersRaw []byte         `db:"chat_users"`
	CreatedAt    time.Time      `db:"created_at"`
	UpdatedAt    time.Time      `db:"updated_at"`

	// CustomRaw holds the person's custom fields (a JSON object), unless
	// CustomOmitted: a page carries them for its first people only, up to
	// MaxPageCustomBytes.
	CustomRaw     []byte `db:"-"`
	CustomOmitted bool   `db:"-"`

	Emails    []storage.Email
	Phones    []storage.Phone
	Devices   []storage.Device
	Locations []storage.Location
	// Groups are MaxPageGroups of the person's groups at most, those of
	// the lowest ids (all of them when there are no more), by path.
	// GroupCount counts the person's groups up to MaxCountedMemberships,
	// exactly when GroupCountExact.
	Groups          []Group
	GroupCount      int
	GroupCountExact bool
	// Lists are MaxPageLists of the lists the person is on at most, the
	// newest (all of them when there are no more), by name. ListCount
	// counts the person's lists up to MaxCountedMemberships, exactly when
	// ListCountExact.
	Lists          []ListRef
	ListCount      int
	ListCountExact bool
}

// The most groups and lists a page of contacts holds per person: a person
// may be in up to storage.MaxGroupsPerPerson groups and on any number of
// lists (every import makes one), and a page holds up to 500 people.
const (
	MaxPageGroups = 50
	MaxPageLists  = 50
)

// MaxPageCustomBytes bounds the custom fields a page of contacts carries:
// the people of a page carry theirs, in the page's order, while together
// they take at most this many bytes (as stored JSON text); the people after
// them carry none and say so (Person.CustomOmitted). The first person of a
// page always carries them, so a page of one reaches every person's. A
// person holds at most contactcsv.MaxCustomFields fields of
// contactcsv.MaxCustomValue characters, up to about 800 KB in four-byte
// characters, and a page of 500 such people would otherwise be 400 MB.
const MaxPageCustomBytes = 2 << 20

// MaxCountedMemberships is how far a page of contacts counts each one's
// groups and lists: as far as a person's groups go
// (storage.MaxGroupsPerPerson), so that their count is exact, while the
// lists of a person on more say "at least this many". Each is counted from
// an index alone, so a page reads at most this many index entries of each
// kind per person, however many lists there are.
const MaxCountedMemberships = storage.MaxGroupsPerPerson

// ChatUser is a team-chat account of a person.
type ChatUser struct {
	Platform    string `json:"platform"`
	UserID      string `json:"userId"`
	DisplayName string `json:"displayName,omitempty"`
}

// ChatUsers decodes the person's chat accounts.
func (p Person) ChatUsers() []ChatUser {
	var out []ChatUser
	_ = json.Unmarshal(p.ChatUsersRaw, &out)
	return out
}

// CustomFields decodes the person's custom fields; values that are not
// strings are given as their JSON text.
func (p Person) CustomFields() map[string]string {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(p.CustomRaw, &raw); err != nil {
		return map[string]string{}
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out
}

// Group is a group a person is a member of.
type Group struct {
	PersonID int64     `db:"person_id"`
	ID       int64     `db:"id"`
	Name     string    `db:"name"`
	ParentID *int64    `db:"parent_id"`
	Depth    int       `db:"depth"`
	IDPath   string    `db:"path"`
	Since    time.Time `db:"since"`
	// Path is the names from the root to the group, joined by " / ".
	Path string
}

// ListRef is a distribution list a person is on.
type ListRef struct {
	PersonID int64  `db:"person_id"`
	ID       int64  `db:"id"`
	Name     string `db:"name"`
}

// Filter selects contacts. Zero fields do not filter; all given fields must match.
type Filter struct {
	// Name matches contacts whose first or last name starts with it
	// (case-insensitive); with several words, the first must start the
	// first name and the last must start the last name.
	Name string
	// Email matches one of the contact's addresses exactly (case-insensitive).
	Email string
	// Phone matches one of the contact's numbers exactly (E.164).
	Phone      string
	ExternalID string
	// GroupID matches the group's members, and with IncludeSubgroups the
	// members of every group below it.
	GroupID          int64
	IncludeSubgroups bool
	// DistributionListID matches the list's members.
	DistributionListID int64
	// CustomFields match when the contact has every key with exactly that value.
	CustomFields map[string]string
	// Role matches contacts holding the role (exact).
	Role string
}

// SortColumns maps the sort properties of findContacts to SQL.
var SortColumns = map[string]string{
	"lastname":   "lower(p.last_name)",
	"firstname":  "lower(p.first_name)",
	"externalid": "p.external_id NULLS LAST",
	"createdat":  "p.created_at",
	"updatedat":  "p.updated_at",
	"id":         "p.id",
}

// Default order and tie-break of findContacts.
const (
	DefaultOrder = "lower(p.last_name), lower(p.first_name)"
	TieBreak     = "p.id"
)

// personColumns are what a page reads of each person in its query;
// loadDetails reads the custom fields of the page's first people.
const personColumns = `p.id, p.directory_id, p.external_id, p.first_name, p.middle_name, p.last_name,
	p.language, p.time_zone, p.roles, p.chat_users, p.created_at, p.updated_at`

// likePrefix escapes LIKE wildcards in s and appends '%'.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// where builds the WHERE clause of f for tenant. groupPath is the path of
// f.GroupID when IncludeSubgroups is set (looked up first, so that the
// prefix match is planned with its value and uses groups_tenant_path).
func where(tenant string, f Filter, groupPath string) (string, []any) {
	args := []any{tenant}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	conds := []string{"p.tenant_id = $1"}
	if name := strings.ToLower(strings.TrimSpace(f.Name)); name != "" {
		words := strings.Fields(name)
		if len(words) == 1 {
			a := arg(likePrefix(words[0]))
			conds = append(conds, fmt.Sprintf("(lower(p.first_name) LIKE %[1]s OR lower(p.last_name) LIKE %[1]s)", a))
		} else {
			whole := arg(likePrefix(name))
			first := arg(likePrefix(words[0]))
			last := arg(likePrefix(words[len(words)-1]))
			conds = append(conds, fmt.Sprintf(
				"((lower(p.first_name) LIKE %s AND lower(p.last_name) LIKE %s) OR lower(p.last_name) LIKE %s OR lower(p.first_name) LIKE %s)",
				first, last, whole, whole))
		}
	}
	if f.Email != "" {
		conds = append(conds, fmt.Sprintf(
			"p.id IN (SELECT e.person_id FROM person_emails e WHERE e.tenant_id = $1 AND e.address = %s)",
			arg(strings.ToLower(strings.TrimSpace(f.Email)))))
	}
	if f.Phone != "" {
		conds = append(conds, fmt.Sprintf(
			"p.id IN (SELECT ph.person_id FROM person_phones ph WHERE ph.tenant_id = $1 AND ph.number = %s)", arg(f.Phone)))
	}
	if f.ExternalID != "" {
		conds = append(conds, "p.external_id = "+arg(f.ExternalID))
	}
	if f.GroupID != 0 {
		if f.IncludeSubgroups {
			conds = append(conds, fmt.Sprintf(`p.id IN (SELECT gm.person_id FROM groups g
				JOIN group_memberships gm ON gm.group_id = g.id
				WHERE g.tenant_id = $1 AND g.path LIKE %s)`, arg(likePrefix(groupPath))))
		} else {
			conds = append(conds, fmt.Sprintf(`p.id IN (SELECT gm.person_id FROM group_memberships gm
				WHERE gm.tenant_id = $1 AND gm.group_id = %s)`, arg(f.GroupID)))
		}
	}
	if f.DistributionListID != 0 {
		conds = append(conds, fmt.Sprintf(`p.id IN (SELECT m.person_id FROM distribution_list_members m
			WHERE m.tenant_id = $1 AND m.list_id = %s)`, arg(f.DistributionListID)))
	}
	if len(f.CustomFields) > 0 {
		b, _ := json.Marshal(f.CustomFields)
		// The second condition lets the planner use the partial GIN index.
		conds = append(conds, "p.custom_fields @> "+arg(string(b))+"::jsonb AND p.custom_fields <> '{}'::jsonb")
	}
	if f.Role != "" {
		conds = append(conds, "p.roles @> ARRAY["+arg(f.Role)+"]::text[] AND p.roles <> '{}'::text[]")
	}
	return strings.Join(conds, "\n  AND "), args
}

// Query is a statement with its arguments.
type Query struct {
	SQL  string
	Args []any
}

// FindQueries returns the statements of a search: list reads every match
// in orderBy order (Find reads a page of it with storage.Page) and count
// counts them (storage.CountRows, with list's arguments), so that tests
// and the benchmark can EXPLAIN exactly what Find runs. ok is false when
// the filter cannot match anything (an unknown group).
func FindQueries(ctx context.Context, db sqlx.QueryerContext, tenant string, f Filter, orderBy string) (list Query, count storage.Count, ok bool, err error) {
	groupPath := ""
	if f.GroupID != 0 && f.IncludeSubgroups {
		if groupPath, ok, err = lookUpPath(ctx, db, tenant, f.GroupID); err != nil || !ok {
			return Query{}, storage.Count{}, false, err
		}
	}
	w, args := where(tenant, f, groupPath)
	list = Query{SQL: fmt.Sprintf("SELECT %s\nFROM people p\nWHERE %s\nORDER BY %s", personColumns, w, orderBy), Args: args}
	return list, storage.CountRows("FROM people p WHERE " + w), true, nil
}

// lookUpPath returns the path of the tenant's group id; ok is false when
// there is no such group (or it has no path yet).
func lookUpPath(ctx context.Context, db sqlx.QueryerContext, tenant string, id int64) (path string, ok bool, err error) {
	err = sqlx.GetContext(ctx, db, &path, `SELECT path FROM groups WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && path == "") {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up group: %w", err)
	}
	return path, true, nil
}

// Find returns one page of the contacts matching f, in orderBy order (an
// ORDER BY list built with rest.OrderBy over SortColumns), with their
// contact information, groups and lists, and how many match
// (storage.CountRows: exactly up to storage.CountLimit).
func Find(ctx context.Context, db *sqlx.DB, tenant string, f Filter, orderBy string, limit, offset int) ([]Person, storage.Total, error) {
	list, count, ok, err := FindQueries(ctx, db, tenant, f, orderBy)
	if err != nil {
		return nil, storage.Total{}, err
	}
	if !ok {
		return nil, storage.ExactTotal(0), nil
	}
	people, total, err := storage.Page[Person](ctx, db, "contacts", count, list.SQL, list.Args, limit, offset)
	if err != nil {
		return nil, storage.Total{}, err
	}
	if err := loadDetails(ctx, db, tenant, people); err != nil {
		return nil, storage.Total{}, err
	}
	return people, total, nil
}

// loadDetails fills the contact information, custom fields, groups and
// lists of people with one query per kind for the whole page.
func loadDetails(ctx context.Context, db sqlx.QueryerContext, tenant string, people []Person) error {
	if len(people) == 0 {
		return nil
	}
	ids := make(pq.Int64Array, len(people))
	at := make(map[int64]*Person, len(people))
	for i := range people {
		ids[i] = people[i].ID
		at[people[i].ID] = &people[i]
		people[i].Emails, people[i].Phones, people[i].Devices = []storage.Email{}, []storage.Phone{}, []storage.Device{}
		people[i].Locations, people[i].Groups, people[i].Lists = []storage.Location{}, []Group{}, []ListRef{}
	}
	customs, err := storage.SelectAll[pageCustom](ctx, db, "load custom fields", pageCustomQuery, tenant, ids, MaxPageCustomBytes)
	if err != nil {
		return err
	}
	for _, c := range customs {
		at[c.PersonID].CustomRaw, at[c.PersonID].CustomOmitted = c.Custom, c.Custom == nil
	}
	if err := attach(ctx, db, "load emails", ofPage("person_emails", storage.EmailColumns), tenant, ids,
		func(e storage.Email) { at[e.PersonID].Emails = append(at[e.PersonID].Emails, e) }); err != nil {
		return err
	}
	if err := attach(ctx, db, "load phones", ofPage("person_phones", storage.PhoneColumns), tenant, ids,
		func(ph storage.Phone) { at[ph.PersonID].Phones = append(at[ph.PersonID].Phones, ph) }); err != nil {
		return err
	}
	if err := attach(ctx, db, "load devices", ofPage("person_devices", storage.DeviceColumns), tenant, ids,
		func(d storage.Device) { at[d.PersonID].Devices = append(at[d.PersonID].Devices, d) }); err != nil {
		return err
	}
	if err := attach(ctx, db, "load locations", ofPage("person_locations", storage.LocationColumns), tenant, ids,
		func(l storage.Location) { at[l.PersonID].Locations = append(at[l.PersonID].Locations, l) }); err != nil {
		return err
	}
	groups, err := storage.SelectAll[Group](ctx, db, "load groups", pageGroupsQuery, tenant, ids, MaxPageGroups)
	if err != nil {
		return err
	}
	paths := make([]string, len(groups))
	for i, g := range groups {
		paths[i] = g.IDPath
	}
	names, err := pathNames(ctx, db, tenant, paths)
	if err != nil {
		return err
	}
	for _, g := range groups {
		g.Path = names[g.IDPath]
		if g.Path == "" {
			g.Path = g.Name
		}
		at[g.PersonID].Groups = append(at[g.PersonID].Groups, g)
	}
	lists, err := storage.SelectAll[ListRef](ctx, db, "load lists", pageListsQuery, tenant, ids, MaxPageLists)
	if err != nil {
		return err
	}
	for _, l := range lists {
		at[l.PersonID].Lists = append(at[l.PersonID].Lists, l)
	}
	counts, err := storage.SelectAll[memberships](ctx, db, "count groups and lists", membershipCountsQuery, tenant, ids, MaxCountedMemberships+1)
	if err != nil {
		return err
	}
	for _, c := range counts {
		p := at[c.PersonID]
		p.GroupCount, p.GroupCountExact = min(c.Groups, MaxCountedMemberships), c.Groups <= MaxCountedMemberships
		p.ListCount, p.ListCountExact = min(c.Lists, MaxCountedMemberships), c.Lists <= MaxCountedMemberships
	}
	return nil
}

// The statements loadDetails reads the groups and lists of a page of
// people with, and counts them by: the tenant, the people's ids and how
// many of each to read or count per person are $1, $2 and $3. A person's
// groups of the lowest ids and lists of the highest come first in the
// person's index of each (group_memberships_person_group, which holds the
// membership's created_at too, and distribution_list_members_person_list):
// the memberships shown are read from those indexes alone and only they
// are joined with their group or list, and the counts read the indexes
// alone too.
const (
	pageGroupsQuery = `SELECT gm.person_id, g.id, g.name, g.parent_id, g.depth, g.path, gm.since
		FROM unnest($2::bigint[]) AS p(id) CROSS JOIN LATERAL (
			SELECT person_id, group_id, created_at AS since FROM group_memberships
			WHERE tenant_id = $1 AND person_id = p.id ORDER BY group_id LIMIT $3) gm
		JOIN groups g ON g.id = gm.group_id AND g.tenant_id = $1
		ORDER BY gm.person_id, g.path, g.id`
	pageListsQuery = `SELECT m.person_id, l.id, l.name
		FROM unnest($2::bigint[]) AS p(id) CROSS JOIN LATERAL (
			SELECT person_id, list_id FROM distribution_list_members
			WHERE tenant_id = $1 AND person_id = p.id ORDER BY list_id DESC LIMIT $3) m
		JOIN distribution_lists l ON l.id = m.list_id AND l.tenant_id = $1
		ORDER BY m.person_id, l.name, l.id`
	// pageCustomQuery reads the custom fields of the page's people in
	// order while their running size stays within $3 (always the first's),
	// and NULL for the others: only the sizes of those are read.
	pageCustomQuery = `SELECT x.id AS person_id,
			CASE WHEN x.n = 1 OR sum(x.bytes) OVER (ORDER BY x.n) <= $3 THEN x.custom_fields END AS custom_fields
		FROM (SELECT p.id, a.n, p.custom_fields, octet_length(p.custom_fields::text) AS bytes
		      FROM people p JOIN unnest($2::bigint[]) WITH ORDINALITY AS a(id, n) ON a.id = p.id
		      WHERE p.tenant_id = $1) x`
	membershipCountsQuery = `SELECT p.id AS person_id,
			(SELECT count(*) FROM (SELECT FROM group_memberships gm WHERE gm.person_id = p.id AND gm.tenant_id = $1 LIMIT $3) c) AS groups,
			(SELECT count(*) FROM (SELECT FROM distribution_list_members m WHERE m.person_id = p.id AND m.tenant_id = $1 LIMIT $3) c) AS lists
		FROM unnest($2::bigint[]) AS p(id)`
)

// ExplainDetails runs the statements that read and count the groups and
// lists of a page of the tenant's people (ids) under EXPLAIN (ANALYZE,
// FORMAT JSON) and returns their plans by what they read ("groups",
// "lists", "counts"), so tests can check how many rows each reads.
func ExplainDetails(ctx context.Context, db sqlx.QueryerContext, tenant string, ids []int64) (map[string]string, error) {
	out := map[string]string{}
	for what, q := range map[string]Query{
		"groups": {SQL: pageGroupsQuery, Args: []any{tenant, pq.Int64Array(ids), MaxPageGroups}},
		"lists":  {SQL: pageListsQuery, Args: []any{tenant, pq.Int64Array(ids), MaxPageLists}},
		"counts": {SQL: membershipCountsQuery, Args: []any{tenant, pq.Int64Array(ids), MaxCountedMemberships + 1}},
	} {
		plan, err := explain(ctx, db, q, "ANALYZE", "FORMAT JSON")
		if err != nil {
			return nil, err
		}
		out[what] = plan
	}
	return out, nil
}

// pageCustom is the custom fields of a person of a page, nil when the
// page's bound left them out.
type pageCustom struct {
	PersonID int64  `db:"person_id"`
	Custom   []byte `db:"custom_fields"`
}

// memberships is how many groups and lists a person has, each counted
// from the person's index of them alone up to one more than
// MaxCountedMemberships.
type memberships struct {
	PersonID int64 `db:"person_id"`
	Groups   int   `db:"groups"`
	Lists    int   `db:"lists"`
}

// attach reads the rows query answers for a page of people (tenant and
// their ids as $1 and $2) and passes each, in order, to add. what names the
// rows in errors.
func attach[T any](ctx context.Context, db sqlx.QueryerContext, what, query, tenant string, ids pq.Int64Array, add func(T)) error {
	rows, err := storage.SelectAll[T](ctx, db, what, query, tenant, ids)
	if err != nil {
		return err
	}
	for _, r := range rows {
		add(r)
	}
	return nil
}

// ofPage is the query that reads the columns cols of the rows of table that
// belong to a page of people, for attach: a person's rows follow one
// another in the order they were added.
func ofPage(table, cols string) string {
	return `SELECT ` + cols + ` FROM ` + table + ` WHERE tenant_id = $1 AND person_id = ANY($2) ORDER BY person_id, id`
}

func lowerTrim(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Explain returns PostgreSQL's plans (EXPLAIN, text format) for the page and
// count statements Find runs for f with the default order, so tests and the
// benchmark can show which indexes serve each filter.
func Explain(ctx context.Context, db *sqlx.DB, tenant string, f Filter, limit int) (page, count string, err error) {
	listQ, countQ, ok, err := FindQueries(ctx, db, tenant, f, DefaultOrder+", "+TieBreak)
	if err != nil || !ok {
		return "", "", err
	}
	pageQ, countQuery := Query{}, Query{}
	pageQ.SQL, pageQ.Args = storage.PageQuery(listQ.SQL, listQ.Args, limit, 0)
	countQuery.SQL, countQuery.Args = storage.CountQuery(countQ, listQ.Args, limit, 0)
	if page, err = explain(ctx, db, pageQ); err != nil {
		return "", "", err
	}
	count, err = explain(ctx, db, countQuery)
	return page, count, err
}

// explain returns PostgreSQL's plan of q (storage.Explain).
func explain(ctx context.Context, db sqlx.QueryerContext, q Query, options ...string) (string, error) {
	return storage.Explain(ctx, db, options, q.SQL, q.Args...)
}
