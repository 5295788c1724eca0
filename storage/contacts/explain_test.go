package contacts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/contacts"
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
