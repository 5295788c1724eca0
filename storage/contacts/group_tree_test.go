package contacts_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage"
	"github.com/tocsin/tocsin/storage/contacts"
	"github.com/tocsin/tocsin/storage/directory"
	"github.com/tocsin/tocsin/storage/storagetest"
)

// checkChildCounts fails the test unless every group of the tenant's tree
// shows as many children as the groups naming it as their parent, and
// the groups named in want have those counts.
func checkChildCounts(t *testing.T, db *storage.DB, tenant, step string, want map[int64]int64) {
	t.Helper()
	ctx := context.Background()
	nodes, _, err := contacts.Tree(ctx, db.DB, tenant, contacts.TreeFilter{}, "g.id", 500, 0)
	if err != nil {
		t.Fatal(err)
	}
	var counted []struct {
		ID       int64 `db:"id"`
		Children int64 `db:"children"`
	}
	if err := db.SelectContext(ctx, &counted, `SELECT g.id, (SELECT count(*) FROM groups c WHERE c.parent_id = g.id) AS children
		FROM groups g WHERE g.tenant_id = $1 ORDER BY g.id`, tenant); err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(counted) {
		t.Fatalf("%s: the tree shows %d groups of %d", step, len(nodes), len(counted))
	}
	for i, n := range nodes {
		if n.ID != counted[i].ID || n.ChildCount != counted[i].Children {
			t.Errorf("%s: group %d shows %d children, has %d", step, n.ID, n.ChildCount, counted[i].Children)
		}
		if w, ok := want[n.ID]; ok && n.ChildCount != w {
			t.Errorf("%s: group %d shows %d children, want %d", step, n.ID, n.ChildCount, w)
		}
	}
}

// TestChildCountsFollowTheGroups: the number of children each node of the
// group tree shows, kept with the groups rather than counted for each page,
// stays what counting the children gives as groups are created (many under
// one parent at once) and a subtree is deleted.
func TestChildCountsFollowTheGroups(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	create := func(tenant string, parent int64, name string) (int64, error) {
		var g directory.Group
		err := db.InTx(ctx, func(tx *sqlx.Tx) error {
			var err error
			g, err = directory.CreateGroup(ctx, tx, tenant, name, "", parent, true)
			return err
		})
		return g.ID, err
	}
	mustCreate := func(tenant string, parent int64, name string) int64 {
		t.Helper()
		id, err := create(tenant, parent, name)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	campus := mustCreate(tenant, 0, "Campus")
	facilities := mustCreate(tenant, campus, "Facilities")
	security := mustCreate(tenant, campus, "Security")
	night := mustCreate(tenant, facilities, "Night shift")
	theirs := mustCreate(other, 0, "Elsewhere")
	mustCreate(other, theirs, "Their team")
	checkChildCounts(t, db, tenant, "created", map[int64]int64{campus: 2, facilities: 1, security: 0, night: 0})

	// Created at once under one parent, whose count each creation changes:
	// each waits for the one before rather than failing.
	const teams = 12
	var wg sync.WaitGroup
	errs := make(chan error, teams)
	for i := range teams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := create(tenant, security, fmt.Sprintf("Team %d", i)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a team created beside the others: %v", err)
	}
	checkChildCounts(t, db, tenant, "teams created at once", map[int64]int64{campus: 2, security: teams})

	// Deleting a group deletes its subtree (the cascade of parent_id).
	if _, err := db.ExecContext(ctx, `DELETE FROM groups WHERE tenant_id = $1 AND id = $2`, tenant, facilities); err != nil {
		t.Fatal(err)
	}
	checkChildCounts(t, db, tenant, "a subtree deleted", map[int64]int64{campus: 1, security: teams})
	checkChildCounts(t, db, other, "the other tenant", map[int64]int64{theirs: 1})
}

// TestGroupTreeReadsOnlyTheNodesItShows: a page of 100 groups of a tree
// whose groups have 200 subgroups each (20,000 below the page), run under
// EXPLAIN ANALYZE, reads the groups it shows and not their children, and
// shows how many children each has.
func TestGroupTreeReadsOnlyTheNodesItShows(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, other := stacktest.DBTenants(t)
	const groups, children = 100, 200
	for _, tn := range []string{tenant, other} {
		for _, q := range []struct {
			sql string
			n   int
		}{
			{`INSERT INTO groups (tenant_id, name, path, depth) SELECT $1, 'Root', '', 0 FROM generate_series(1, $2::int)`, 1},
			{`INSERT INTO groups (tenant_id, parent_id, name, path, depth)
			 SELECT $1, r.id, 'Group ' || i, '', 1 FROM groups r, generate_series(1, $2::int) AS i WHERE r.tenant_id = $1 AND r.depth = 0`, groups},
			{`INSERT INTO groups (tenant_id, parent_id, name, path, depth)
			 SELECT $1, g.id, 'Team ' || i, '', 2 FROM groups g, generate_series(1, $2::int) AS i WHERE g.tenant_id = $1 AND g.depth = 1`, children},
			{`UPDATE groups SET path = '/' || id || '/' WHERE tenant_id = $1 AND depth = $2`, 0},
			{`UPDATE groups c SET path = p.path || c.id || '/' FROM groups p WHERE c.parent_id = p.id AND c.tenant_id = $1 AND c.depth = $2`, 1},
			{`UPDATE groups c SET path = p.path || c.id || '/' FROM groups p WHERE c.parent_id = p.id AND c.tenant_id = $1 AND c.depth = $2`, 2},
		} {
			if _, err := db.ExecContext(ctx, q.sql, tn, q.n); err != nil {
				t.Fatalf("seed: %v\n%s", err, q.sql)
			}
		}
	}
	if _, err := db.ExecContext(ctx, `VACUUM ANALYZE groups`); err != nil {
		t.Fatal(err)
	}
	var root int64
	if err := db.GetContext(ctx, &root, `SELECT id FROM groups WHERE tenant_id = $1 AND depth = 0`, tenant); err != nil {
		t.Fatal(err)
	}
	f := contacts.TreeFilter{ParentID: &root}
	nodes, total, err := contacts.Tree(ctx, db.DB, tenant, f, contacts.TreeDefaultOrder+", "+contacts.TreeTieBreak, groups, 0)
	if err != nil || len(nodes) != groups || total != storage.ExactTotal(groups) {
		t.Fatalf("%d nodes of %+v: %v", len(nodes), total, err)
	}
	for _, n := range nodes {
		if n.ChildCount != children {
			t.Errorf("%s shows %d children, has %d", n.Path, n.ChildCount, children)
		}
	}
	plans, err := contacts.ExplainTree(ctx, db.DB, tenant, f, contacts.TreeDefaultOrder+", "+contacts.TreeTieBreak, groups, 0)
	if err != nil {
		t.Fatal(err)
	}
	for what, plan := range plans {
		if read, seqScans := storagetest.RowsRead(t, plan, "groups"); read > groups || seqScans > 0 {
			t.Errorf("%s: %d groups read (at most %d), %d full scans:\n%s", what, read, groups, seqScans, plan)
		}
	}
}
