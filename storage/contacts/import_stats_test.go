package contacts_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/stacktest"
	"github.com/tocsin/tocsin/storage/contacts"
)

// TestImportLeavesStatisticsForTheAlertThatFollows imports 2,000 new
// contacts into tables that have never been analyzed and checks that the
// planner has statistics of the columns an alert to the new list resolves
// its recipients by. Without them it read person_emails and person_phones
// in id order for each recipient's first address, and an alert sent to a
// 25,000-contact list right after its import spent minutes resolving it.
func TestImportLeavesStatisticsForTheAlertThatFollows(t *testing.T) {
	t.Parallel()
	ctx, db, tenant, _ := stacktest.DBTenants(t)
	var csv strings.Builder
	csv.WriteString("firstName,lastName,emails,mobilePhones\n")
	for i := range 2000 {
		fmt.Fprintf(&csv, "F%d,L%d,p%d@example.com,+1555%07d\n", i, i, i, 3000000+i)
	}
	im, err := contacts.BeginImport(ctx, db, tenant, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer im.Rollback()
	if err := im.Stage(ctx, strings.NewReader(csv.String())); err != nil {
		t.Fatal(err)
	}
	res, err := im.Finish(ctx, "big list", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 2000 {
		t.Fatalf("created %d contacts, want 2000", res.Created)
	}
	for _, c := range []struct{ table, column string }{
		{"people", "tenant_id"}, {"person_emails", "person_id"}, {"person_phones", "person_id"}, {"distribution_list_members", "person_id"},
	} {
		var n int
		if err := db.GetContext(ctx, &n, `SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = $1 AND attname = $2`,
			c.table, c.column); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("no statistics of %s.%s after the import", c.table, c.column)
		}
	}
}
