package contacts_test

import (
	"context"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/contacts"
	"github.com/tocsin/tocsin/storage/directory"
)

// TestMemberCountsFollowTheMembers: the member counts that pages of
// distribution lists and groups show, kept with the memberships rather than
// counted for each page, stay what counting the members gives as an
// import adds a list's members at once, users join and leave a group, a
// person is deleted and a list is deleted.
func TestMemberCountsFollowTheMembers(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	var people []int64
	if err := db.SelectContext(ctx, &people, `INSERT INTO people (tenant_id, directory_id, first_name)
		SELECT $1, 'staff', 'P' || i FROM generate_series(1, 3) i RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	newList := func(name string, members []int64) int64 {
		t.Helper()
		var id int64
		if err := db.GetContext(ctx, &id, `INSERT INTO distribution_lists (tenant_id, name) VALUES ($1, $2) RETURNING id`, tenant, name); err != nil {
			t.Fatal(err)
		}
		// As an import adds them: one statement for the whole list.
		if _, err := db.ExecContext(ctx, `INSERT INTO distribution_list_members (tenant_id, list_id, person_id)
			SELECT $1, $2, unnest($3::bigint[])`, tenant, id, pq.Int64Array(members)); err != nil {
			t.Fatal(err)
		}
		return id
	}
	all, some := newList("all", people), newList("some", people[1:])
	var group int64
	if err := db.GetContext(ctx, &group, `INSERT INTO groups (tenant_id, name, path) VALUES ($1, 'wardens', '') RETURNING id`, tenant); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int64{people[0], people[1], people[0]} {
		if _, err := directory.AddMembership(ctx, db, tenant, group, p); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string, lists map[int64]int64, groupMembers int64) {
		t.Helper()
		for id, want := range lists {
			l, err := contacts.GetList(ctx, db, tenant, id)
			var counted int64
			if err == nil {
				err = db.GetContext(ctx, &counted, `SELECT count(*) FROM distribution_list_members WHERE list_id = $1`, id)
			}
			if err != nil || l.MemberCount != want || counted != want {
				t.Errorf("%s: list %d has %d members (%d counted), want %d: %v", step, id, l.MemberCount, counted, want, err)
			}
		}
		g, err := directory.GetGroup(ctx, db, tenant, group)
		if err != nil || g.MemberCount != groupMembers {
			t.Errorf("%s: the group has %d members, want %d: %v", step, g.MemberCount, groupMembers, err)
		}
		nodes, _, err := contacts.Tree(ctx, db.DB, tenant, contacts.TreeFilter{}, "g.id", 10, 0)
		if err != nil || len(nodes) != 1 || nodes[0].MemberCount != groupMembers {
			t.Errorf("%s: the group tree %+v, %v", step, nodes, err)
		}
	}
	check("created", map[int64]int64{all: 3, some: 2}, 2)
	if err := directory.RemoveMembership(ctx, db, tenant, group, people[1]); err != nil {
		t.Fatal(err)
	}
	check("a member left the group", map[int64]int64{all: 3, some: 2}, 1)
	if err := directory.DeleteUser(ctx, db, tenant, "staff", people[0]); err != nil {
		t.Fatal(err)
	}
	check("a person was deleted", map[int64]int64{all: 2, some: 2}, 0)
	if err := contacts.DeleteList(ctx, db, tenant, all); err != nil {
		t.Fatal(err)
	}
	check("a list was deleted", map[int64]int64{some: 2}, 0)

	// The pages read the counts, not the members: they answer while no
	// membership can be read.
	lock, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	if _, err := lock.ExecContext(ctx, `LOCK TABLE distribution_list_members, group_memberships IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	waitAtMost, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lists, total, err := contacts.Lists(waitAtMost, db.DB, tenant, "", "l.id", 10, 0)
	if err != nil || total.N != 1 || len(lists) != 1 || lists[0].ID != some || lists[0].MemberCount != 2 {
		t.Fatalf("lists %+v of %+v, %v", lists, total, err)
	}
	if nodes, _, err := contacts.Tree(waitAtMost, db.DB, tenant, contacts.TreeFilter{}, "g.id", 10, 0); err != nil || len(nodes) != 1 {
		t.Fatalf("group tree %+v, %v", nodes, err)
	}
	if groups, _, err := directory.FindGroups(waitAtMost, db, tenant, directory.GroupFilter{}, "id", 10, 0); err != nil || len(groups) != 1 || groups[0].MemberCount != 0 {
		t.Fatalf("groups %+v, %v", groups, err)
	}
}
