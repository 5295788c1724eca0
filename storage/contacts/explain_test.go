package contacts_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/contacts"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// seed gives tenant and a neighbour n contacts each, with an email, a phone,
// custom fields, some roles, one membership in a two-level tree of 110 groups
// and one of 20 distribution lists, then vacuums and analyzes the tables as
// autovacuum would.
func seed(t *testing.T, tenant, neighbour string, n int) (db *storage.DB, group, list int64) {
	t.Helper()
	db = stacktest.DB(t)
	ctx := context.Background()
	for _, tn := range []string{tenant, neighbour} {
		for _, q := range []string{
			`INSERT INTO people (tenant_id, external_id, first_name, last_name, custom_fields, roles)
			 SELECT $1, 'EXT' || i, 'First' || i, 'Last' || (i % 5000),
			        jsonb_build_object('site', 'S' || (i % 1000), 'kind', 'K' || (i % 3)),
			        CASE WHEN i % 500 = 0 THEN ARRAY['Floor warden'] ELSE '{}' END
			 FROM generate_series(1, $2::int) AS i`,
			`INSERT INTO person_emails (tenant_id, person_id, address)
			 SELECT tenant_id, id, lower(first_name) || '@example.com' FROM people WHERE tenant_id = $1`,
			`INSERT INTO person_phones (tenant_id, person_id, number)
			 SELECT tenant_id, id, '+1555' || lpad(id::text, 7, '0') FROM people WHERE tenant_id = $1`,
			`INSERT INTO groups (tenant_id, name, path, depth)
			 SELECT $1, 'Root' || i, '', 0 FROM generate_series(1, 10) AS i`,
			`UPDATE groups SET path = '/' || id || '/' WHERE tenant_id = $1`,
			`INSERT INTO groups (tenant_id, parent_id, name, path, depth)
			 SELECT $1, g.id, 'Child' || i, '', 1 FROM groups g, generate_series(1, 10) AS i WHERE g.tenant_id = $1 AND g.depth = 0`,
			`UPDATE groups c SET path = p.path || c.id || '/' FROM groups p WHERE c.parent_id = p.id AND c.tenant_id = $1`,
			`INSERT INTO group_memberships (tenant_id, group_id, person_id)
			 SELECT $1, g.id, p.id FROM people p JOIN LATERAL (
			     SELECT id FROM groups WHERE tenant_id = $1 AND depth = 1 ORDER BY id OFFSET (p.id % 100) LIMIT 1) g ON true
			 WHERE p.tenant_id = $1`,
			`INSERT INTO distribution_lists (tenant_id, name) SELECT $1, 'List ' || i FROM generate_series(0, 19) AS i`,
			`INSERT INTO distribution_list_members (tenant_id, list_id, person_id)
			 SELECT $1, l.id, p.id FROM distribution_lists l, people p
			 WHERE l.tenant_id = $1 AND p.tenant_id = $1 AND l.name = 'List ' || (p.id % 20)`,
		} {
			args := []any{tn}
			if strings.Contains(q, "$2") {
				args = append(args, n)
			}
			if _, err := db.ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("seed: %v\n%s", err, q)
			}
		}
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE people, person_emails, person_phones, groups, group_memberships,
		distribution_lists, distribution_list_members`); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &group, `SELECT id FROM groups WHERE tenant_id = $1 AND depth = 0 ORDER BY id LIMIT 1`, tenant); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &list, `SELECT id FROM distribution_lists WHERE tenant_id = $1 ORDER BY id LIMIT 1`, tenant); err != nil {
		t.Fatal(err)
	}
	return db, group, list
}

// TestFindUsesIndexes runs EXPLAIN on the statements findContacts sends for
// each filter, over two tenants of 50,000 contacts, and checks that the
// filter is served by its index and that no contact table is read in full.
func TestFindUsesIndexes(t *testing.T) {
	t.Parallel()
	tenant, neighbour := stacktest.NewTenant(), stacktest.NewTenant()
	db, group, list := seed(t, tenant, neighbour, 50_000)
	cases := []struct {
		name   string
		filter contacts.Filter
		// indexes must all appear in the page or count plan; "a|b" means
		// either a or b.
		indexes []string
	}{
		{"no filter (page in index order)", contacts.Filter{}, []string{"people_tenant_last_first"}},
		{"name prefix", contacts.Filter{Name: "first123"}, []string{"people_tenant_first_prefix", "people_tenant_last_prefix"}},
		{"first and last name", contacts.Filter{Name: "first12 last12"}, []string{"people_tenant_first_prefix", "people_tenant_last_prefix"}},
		{"email", contacts.Filter{Email: "first4242@example.com"}, []string{"person_emails_tenant_address"}},
		{"phone", contacts.Filter{Phone: "+15550004242"}, []string{"person_phones_tenant_number"}},
		{"external id", contacts.Filter{ExternalID: "EXT4242"}, []string{"people_tenant_external"}},
		{"group and subgroups", contacts.Filter{GroupID: group, IncludeSubgroups: true}, []string{"group_memberships_pkey|group_memberships_person"}},
		{"group alone", contacts.Filter{GroupID: group}, []string{"group_memberships_pkey|group_memberships_person"}},
		{"distribution list", contacts.Filter{DistributionListID: list}, []string{"distribution_list_members_pkey"}},
		{"custom field", contacts.Filter{CustomFields: map[string]string{"site": "S42"}}, []string{"people_custom_fields"}},
		{"role", contacts.Filter{Role: "Floor warden"}, []string{"people_roles"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page, count, err := contacts.Explain(context.Background(), db.DB, tenant, c.filter, 25)
			if err != nil {
				t.Fatal(err)
			}
			// The total counts no further than storage.CountLimit: a
			// count without its limit reads every match.
			if !strings.Contains(count, "Limit") {
				t.Errorf("the count is not bounded:\n%s", count)
			}
			plans := page + "\n" + count
			if c.filter.Name == "" && c.filter.Email == "" && c.filter.Phone == "" && c.filter.ExternalID == "" &&
				c.filter.GroupID == 0 && c.filter.DistributionListID == 0 && c.filter.CustomFields == nil && c.filter.Role == "" {
				// The first CountLimit contacts of a tenant that holds
				// half the table are as quickly read from the table as
				// from an index; the page must use its index.
				plans = page
			}
			for _, table := range []string{"people", "person_emails", "person_phones", "group_memberships", "distribution_list_members"} {
				if strings.Contains(plans, "Seq Scan on "+table+" ") {
					t.Errorf("full scan of %s:\n%s", table, plans)
				}
			}
			for _, want := range c.indexes {
				used := false
				for _, idx := range strings.Split(want, "|") {
					used = used || strings.Contains(plans, idx)
				}
				if !used {
					t.Errorf("plan does not use %s:\n%s", want, plans)
				}
			}
		})
	}
}

// TestContactPageReadsOnlyTheGroupsAndListsItShows: on the first page of a
// tenant of 50,000 contacts whose 500 contacts (the most a page holds) are
// each in more than
// contacts.MaxCountedMemberships groups and lists, every contact shows its
// groups of the lowest ids and its newest lists, counts them up to the
// limit and says when there are more; and the statements that read them
// (run under EXPLAIN ANALYZE) read no more memberships per contact than
// they show or count, rather than every one the contact has.
func TestContactPageReadsOnlyTheGroupsAndListsItShows(t *testing.T) {
	t.Parallel()
	tenant, neighbour := stacktest.NewTenant(), stacktest.NewTenant()
	db, _, _ := seed(t, tenant, neighbour, 50_000)
	ctx := context.Background()
	// Each contact of the first page (by name) joins extra groups and
	// lists: the first as many as make the limit with the one it has, the
	// others more.
	const extra, page = contacts.MaxCountedMemberships + 20, 500
	for _, q := range []string{
		`INSERT INTO groups (tenant_id, name, path, depth) SELECT $1, 'Extra' || i, '', 0 FROM generate_series(1, $2::int) AS i`,
		`UPDATE groups SET path = '/' || id || '/' WHERE tenant_id = $1 AND path = ''`,
		`INSERT INTO distribution_lists (tenant_id, name) SELECT $1, 'Extra ' || i FROM generate_series(1, $2::int) AS i`,
		`WITH p AS (SELECT id, row_number() OVER (ORDER BY lower(last_name), lower(first_name), id) AS n FROM people
			WHERE tenant_id = $1 ORDER BY lower(last_name), lower(first_name), id LIMIT $3),
		g AS (SELECT id, row_number() OVER (ORDER BY id) AS k FROM groups WHERE tenant_id = $1 AND name LIKE 'Extra%')
		INSERT INTO group_memberships (tenant_id, group_id, person_id)
		SELECT $1, g.id, p.id FROM p, g WHERE g.k <= $2 AND (p.n > 1 OR g.k < $4)`,
		`WITH p AS (SELECT id, row_number() OVER (ORDER BY lower(last_name), lower(first_name), id) AS n FROM people
			WHERE tenant_id = $1 ORDER BY lower(last_name), lower(first_name), id LIMIT $3),
		l AS (SELECT id, row_number() OVER (ORDER BY id) AS k FROM distribution_lists WHERE tenant_id = $1 AND name LIKE 'Extra %')
		INSERT INTO distribution_list_members (tenant_id, list_id, person_id)
		SELECT $1, l.id, p.id FROM p, l WHERE l.k <= $2 AND (p.n > 1 OR l.k < $4)`,
		`VACUUM ANALYZE groups, group_memberships, distribution_lists, distribution_list_members`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, tenant)
		}
		if strings.Contains(q, "$2") {
			args = append(args, extra)
		}
		if strings.Contains(q, "$3") {
			args = append(args, page, contacts.MaxCountedMemberships)
		}
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}

	people, total, err := contacts.Find(ctx, db.DB, tenant, contacts.Filter{}, contacts.DefaultOrder+", "+contacts.TieBreak, page, 0)
	if err != nil || len(people) != page || total != (storage.Total{N: storage.CountLimit}) {
		t.Fatalf("first page: %d contacts of %+v, %v", len(people), total, err)
	}
	for i, p := range people {
		// The first has as many of each as are counted, the others more.
		n, exact := contacts.MaxCountedMemberships, i == 0
		if p.GroupCount != n || p.GroupCountExact != exact || p.ListCount != n || p.ListCountExact != exact {
			t.Errorf("contact %d: %d groups (exact %v), %d lists (exact %v); want %d (exact %v)",
				i, p.GroupCount, p.GroupCountExact, p.ListCount, p.ListCountExact, n, exact)
		}
		var groups, lists []int64
		// Those of the lowest ids, by path.
		if err := db.SelectContext(ctx, &groups, `SELECT g.id FROM (SELECT group_id FROM group_memberships WHERE person_id = $1 ORDER BY group_id LIMIT $2) m
			JOIN groups g ON g.id = m.group_id ORDER BY g.path, g.id`, p.ID, contacts.MaxPageGroups); err != nil {
			t.Fatal(err)
		}
		if err := db.SelectContext(ctx, &lists, `SELECT m.list_id FROM distribution_list_members m JOIN distribution_lists l ON l.id = m.list_id
			WHERE m.person_id = $1 ORDER BY m.list_id DESC LIMIT $2`, p.ID, contacts.MaxPageLists); err != nil {
			t.Fatal(err)
		}
		var gotGroups, gotLists []int64
		for _, g := range p.Groups {
			gotGroups = append(gotGroups, g.ID)
		}
		names := map[int64]string{}
		for _, l := range p.Lists {
			gotLists = append(gotLists, l.ID)
			names[l.ID] = l.Name
		}
		// The newest, by name.
		slices.SortFunc(lists, func(a, b int64) int { return cmp.Or(strings.Compare(names[a], names[b]), cmp.Compare(a, b)) })
		if !slices.Equal(gotGroups, groups) || !slices.Equal(gotLists, lists) {
			t.Errorf("contact %d shows groups %v and lists %v,\nwant %v and %v", i, gotGroups, gotLists, groups, lists)
		}
	}

	ids := make([]int64, len(people))
	for i, p := range people {
		ids[i] = p.ID
	}
	plans, err := contacts.ExplainDetails(ctx, db.DB, tenant, ids)
	if err != nil {
		t.Fatal(err)
	}
	for what, most := range map[string]int{
		"groups": page * contacts.MaxPageGroups,
		"lists":  page * contacts.MaxPageLists,
		"counts": page * 2 * (contacts.MaxCountedMemberships + 1),
	} {
		read, seqScans := storagetest.RowsRead(t, plans[what], "group_memberships", "distribution_list_members")
		if read > most || seqScans > 0 {
			t.Errorf("%s: %d memberships read (at most %d), %d full scans:\n%s", what, read, most, seqScans, plans[what])
		}
	}
}
