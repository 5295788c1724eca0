package storage_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tocsin/tocsin/internal/stacktest"
)

// lastLockingIndexMigration is the last migration that builds indexes on
// tables earlier migrations created inside goose's transaction, holding the
// tables' writes for each build. Released migrations are never edited;
// every later one follows the rule indexBuildProblems checks (README,
// Migrations and upgrades).
const lastLockingIndexMigration = 604

// migrationFile is a migration's number, file name and text.
type migrationFile struct {
	version int64
	name    string
	text    string
}

// readMigrations reads the embedded migrations' files in number order.
func readMigrations(t *testing.T) []migrationFile {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	var out []migrationFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := os.ReadFile("migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, migrationFile{version: migrationVersion(t, e.Name()), name: e.Name(), text: string(b)})
	}
	slices.SortFunc(out, func(a, b migrationFile) int { return int(a.version - b.version) })
	return out
}

// migrationVersion is the number a migration's file name begins with.
func migrationVersion(t *testing.T, name string) int64 {
	t.Helper()
	digits, _, _ := strings.Cut(name, "_")
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		t.Fatalf("migration %s: no number: %v", name, err)
	}
	return v
}

var (
	createTableRE = regexp.MustCompile(`^create (?:(?:global |local )?(?:temporary |temp )|unlogged )?table (?:if not exists )?([\w."]+)`)
	createIndexRE = regexp.MustCompile(`^create (?:unique )?index (concurrently )?(?:if not exists )?(?:([\w"]+) )?on (?:only )?([\w."]+)`)
	dropIndexRE   = regexp.MustCompile(`^drop index (concurrently )?(if exists )?([\w."]+)`)
	alterTableRE  = regexp.MustCompile(`^alter table (?:if exists )?(?:only )?([\w."]+) (.*)`)
	addIndexedRE  = regexp.MustCompile(`\badd (?:constraint [\w"]+ )?(?:unique|primary key|exclude)\b`)
)

// indexBuildProblems checks the index builds of the migrations numbered
// after after, against the tables the migrations before them created. An
// index on a table the migration does not create itself is built
// CONCURRENTLY, so that writes go on during the build; such a build cannot
// run in a transaction, so its migration is marked -- +goose NO
// TRANSACTION and holds nothing but index builds (a migration without a
// transaction that fails part way is run again whole); and the index is
// named and dropped first (DROP INDEX CONCURRENTLY IF EXISTS), so the run
// after a build that failed, which leaves an INVALID index behind, builds
// it again rather than keeping it. A constraint that builds an index
// (UNIQUE, PRIMARY KEY, EXCLUDE) is added to such a table only USING an
// index built so. It returns one line per rule broken.
func indexBuildProblems(files []migrationFile, after int64) []string {
	var problems []string
	createdBy := map[string]string{} // table → the migration that created it
	for _, f := range files {
		noTx := regexp.MustCompile(`(?m)^--\s*\+goose\s+NO\s+TRANSACTION\s*$`).MatchString(f.text)
		statements := upStatements(f.text)
		created := map[string]bool{}
		for _, st := range statements {
			if m := createTableRE.FindStringSubmatch(st); m != nil {
				created[tableName(m[1])] = true
			}
		}
		check := f.version > after
		problem := func(format string, args ...any) {
			problems = append(problems, f.name+": "+fmt.Sprintf(format, args...))
		}
		existing := func(table string) (string, bool) {
			if created[table] {
				return "", false
			}
			if by, ok := createdBy[table]; ok {
				return "created by " + by, true
			}
			return "created by an earlier migration", true
		}
		dropped := map[string]bool{}
		for _, st := range statements {
			if m := dropIndexRE.FindStringSubmatch(st); m != nil {
				dropped[tableName(m[3])] = true
				if check && noTx && (m[1] == "" || m[2] == "") {
					problem("%q: a migration without a transaction drops its indexes with DROP INDEX CONCURRENTLY IF EXISTS", st)
				}
				continue
			}
			m := createIndexRE.FindStringSubmatch(st)
			if m == nil {
				if check && noTx {
					problem("%q: a migration without a transaction holds only index builds, since a run that fails part way is run again whole; put it in a migration of its own", st)
				}
				if a := alterTableRE.FindStringSubmatch(st); check && a != nil && addIndexedRE.MatchString(a[2]) && !strings.Contains(a[2], "using index") {
					if by, ok := existing(tableName(a[1])); ok {
						problem("%q builds an index on %s (%s) holding its reads and writes: build a unique index CONCURRENTLY and add the constraint USING INDEX", st, tableName(a[1]), by)
					}
				}
				continue
			}
			concurrently, name, table := m[1] != "", tableName(m[2]), tableName(m[3])
			by, onExisting := existing(table)
			switch {
			case !check:
			case onExisting && !concurrently:
				problem("%s (%s) holds the table's writes for the whole build: build it CONCURRENTLY in a -- +goose NO TRANSACTION migration",
					strings.Join(strings.Fields("CREATE INDEX "+name+" ON "+table), " "), by)
			case concurrently && !noTx:
				problem("CREATE INDEX CONCURRENTLY %s cannot run in goose's transaction: mark the migration -- +goose NO TRANSACTION", name)
			case concurrently && name == "":
				problem("CREATE INDEX CONCURRENTLY ON %s: name the index, so that the run after a failed build can drop it", table)
			case concurrently && !dropped[name]:
				problem("CREATE INDEX CONCURRENTLY %s: drop it first (DROP INDEX CONCURRENTLY IF EXISTS %[1]s), so that the run after a failed build, which leaves an INVALID index, builds it again", name)
			}
		}
		for table := range created {
			if _, ok := createdBy[table]; !ok {
				createdBy[table] = f.name
			}
		}
	}
	return problems
}

// tableName is a table's or index's name as PostgreSQL keeps it: without
// schema or quotes.
func tableName(s string) string {
	if i := strings.LastIndex(s, "."); i >= 0 {
		s = s[i+1:]
	}
	return strings.Trim(s, `"`)
}

// upStatements returns the statements of a migration's Up part, each in
// lower case with its spaces collapsed, without comments, string literals
// or dollar-quoted bodies (a function's statements are not the
// migration's).
func upStatements(text string) []string {
	up, _, _ := strings.Cut(text, "-- +goose Down")
	var b strings.Builder
	dollarTag := regexp.MustCompile(`^\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$`)
	for i := 0; i < len(up); {
		switch {
		case strings.HasPrefix(up[i:], "--"):
			end := strings.IndexByte(up[i:], '\n')
			if end < 0 {
				end = len(up) - i
			}
			i += end
		case up[i] == '\'':
			j := i + 1
			for j < len(up) && (up[j] != '\'' || strings.HasPrefix(up[j:], "''")) {
				if up[j] == '\'' {
					j++
				}
				j++
			}
			b.WriteString("''")
			i = j + 1
		case dollarTag.MatchString(up[i:]):
			tag := dollarTag.FindString(up[i:])
			end := strings.Index(up[i+len(tag):], tag)
			if end < 0 {
				end = len(up) - i - len(tag)
			}
			b.WriteString("''")
			i += len(tag) + end + len(tag)
		default:
			b.WriteByte(up[i])
			i++
		}
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";") {
		if st = strings.ToLower(strings.Join(strings.Fields(st), " ")); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// TestIndexBuildsOnExistingTablesLeaveWritesGoingOn: no migration after
// lastLockingIndexMigration builds an index on a table an earlier migration
// created inside its transaction, and each concurrent build is rebuilt by
// the run after a failure (indexBuildProblems).
func TestIndexBuildsOnExistingTablesLeaveWritesGoingOn(t *testing.T) {
	for _, p := range indexBuildProblems(readMigrations(t), lastLockingIndexMigration) {
		t.Error(p)
	}
}

// TestIndexBuildRuleFindsEachBreach: the check of the index builds finds
// the builds inside a transaction that the released migrations made, and
// every way a new migration can break the rule, and passes the builds
// that keep it.
func TestIndexBuildRuleFindsEachBreach(t *testing.T) {
	released := indexBuildProblems(readMigrations(t), 0)
	for _, want := range []string{
		"00300_recipients.sql: CREATE INDEX people_tenant_first_prefix ON people (created by 00001_core.sql)",
		"00604_event_turns.sql: CREATE INDEX events_undispatched_turn ON events (created by 00001_core.sql)",
	} {
		if !slices.ContainsFunc(released, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("not found: %s\nin %q", want, released)
		}
	}
	for _, p := range released {
		// An index on a table made in the same migration is not one.
		if strings.Contains(p, "00001_core.sql:") || strings.Contains(p, "00640_alert_etn_counts.sql:") {
			t.Errorf("a table's own migration: %s", p)
		}
	}

	base := migrationFile{version: 1, name: "00001_base.sql", text: `-- +goose Up
CREATE TABLE people (id bigint PRIMARY KEY, tenant_id text NOT NULL, email text);
-- +goose Down
DROP TABLE people;`}
	const good = `-- +goose NO TRANSACTION
-- +goose Up
-- A comment saying CREATE INDEX x ON people (a); does not count.
DROP INDEX CONCURRENTLY IF EXISTS people_email;
CREATE UNIQUE INDEX CONCURRENTLY people_email ON public.people (tenant_id, email);
-- +goose Down
CREATE INDEX people_old ON people (email);`
	for _, c := range []struct {
		name, text string
		problem    string // "" when the migration keeps the rule
	}{
		{"a concurrent build dropped first", good, ""},
		{"an index on a table of its own", `-- +goose Up
CREATE TABLE IF NOT EXISTS "teams" (id bigint, name text);
CREATE INDEX teams_name ON teams (name);
ALTER TABLE teams ADD CONSTRAINT teams_id UNIQUE (id);
-- +goose StatementBegin
CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'CREATE INDEX x ON people (email)'; END $$;
-- +goose StatementEnd`, ""},
		{"a constraint using a concurrent build", `-- +goose Up
ALTER TABLE people ADD CONSTRAINT people_email UNIQUE USING INDEX people_email;`, ""},
		{"a build in the transaction", `-- +goose Up
CREATE INDEX people_email ON people (email);`, "CREATE INDEX people_email ON people (created by 00001_base.sql) holds the table's writes"},
		{"an unnamed build in the transaction", `-- +goose Up
create index on "people" (email);`, "CREATE INDEX ON people (created by 00001_base.sql)"},
		{"a concurrent build in a transaction", `-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS people_email;
CREATE INDEX CONCURRENTLY people_email ON people (email);`, "cannot run in goose's transaction"},
		{"a concurrent build not dropped first", strings.Replace(good, "DROP INDEX CONCURRENTLY IF EXISTS people_email;", "", 1),
			"drop it first (DROP INDEX CONCURRENTLY IF EXISTS people_email)"},
		{"a concurrent build dropped in the transaction", strings.Replace(good, "DROP INDEX CONCURRENTLY IF EXISTS", "DROP INDEX IF EXISTS", 1),
			"drops its indexes with DROP INDEX CONCURRENTLY IF EXISTS"},
		{"an unnamed concurrent build", `-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY ON people (email);`, "name the index"},
		{"another change without a transaction", strings.Replace(good, "-- +goose Down", "ALTER TABLE people ADD COLUMN phone text;\n-- +goose Down", 1),
			"holds only index builds"},
		{"a constraint that builds its index", `-- +goose Up
ALTER TABLE ONLY people ADD PRIMARY KEY (tenant_id, id);`, "builds an index on people (created by 00001_base.sql)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			problems := indexBuildProblems([]migrationFile{base, {version: 2, name: "00002_change.sql", text: c.text}}, 1)
			if c.problem == "" && len(problems) > 0 || c.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0], c.problem)) {
				t.Errorf("problems %q, want %q", problems, c.problem)
			}
		})
	}
}

// TestAFailedConcurrentIndexBuildIsBuiltAgain: a migration that keeps the
// rule and whose concurrent build fails (a unique index over duplicates)
// leaves an INVALID index and is not recorded; once the duplicates are
// gone, the next run builds the index again, valid, rather than keeping
// the INVALID one, and is recorded.
func TestAFailedConcurrentIndexBuildIsBuiltAgain(t *testing.T) {
	t.Parallel()
	ctx, db, _, _ := stacktest.DBTenants(t)
	migrations := fstest.MapFS{
		"90001_widgets.sql": {Data: []byte(`-- +goose Up
CREATE TABLE widgets (id bigint PRIMARY KEY, code text NOT NULL);
INSERT INTO widgets VALUES (1, 'a'), (2, 'b'), (3, 'a');
-- +goose Down
DROP TABLE widgets;`)},
		"90002_widget_codes.sql": {Data: []byte(`-- +goose NO TRANSACTION
-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS widgets_code;
CREATE UNIQUE INDEX CONCURRENTLY widgets_code ON widgets (code);
-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS widgets_code;`)},
	}
	if problems := indexBuildProblems([]migrationFile{
		{version: 90001, name: "90001_widgets.sql", text: string(migrations["90001_widgets.sql"].Data)},
		{version: 90002, name: "90002_widget_codes.sql", text: string(migrations["90002_widget_codes.sql"].Data)},
	}, lastLockingIndexMigration); len(problems) > 0 {
		t.Fatalf("the test's migrations break the rule: %q", problems)
	}
	index := func() (valid, exists, recorded bool) {
		t.Helper()
		if err := db.GetContext(ctx, &exists, `SELECT to_regclass('widgets_code') IS NOT NULL`); err != nil {
			t.Fatal(err)
		}
		if exists {
			if err := db.GetContext(ctx, &valid, `SELECT indisvalid FROM pg_index WHERE indexrelid = 'widgets_code'::regclass`); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.GetContext(ctx, &recorded, `SELECT EXISTS (SELECT 1 FROM goose_db_version WHERE version_id = 90002 AND is_applied)`); err != nil {
			t.Fatal(err)
		}
		return valid, exists, recorded
	}
	if err := db.MigrateFrom(ctx, migrations); err == nil {
		t.Fatal("a unique index over duplicates was built")
	}
	if valid, exists, recorded := index(); !exists || valid || recorded {
		t.Fatalf("after the failed build: index left %v, valid %v, migration recorded %v", exists, valid, recorded)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM widgets WHERE id = 3`); err != nil {
		t.Fatal(err)
	}
	if err := db.MigrateFrom(ctx, migrations); err != nil {
		t.Fatal(err)
	}
	if valid, exists, recorded := index(); !exists || !valid || !recorded {
		t.Fatalf("after the next run: index %v, valid %v, migration recorded %v", exists, valid, recorded)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO widgets VALUES (4, 'b')`); err == nil {
		t.Fatal("the rebuilt index lets a duplicate in")
	}
}
