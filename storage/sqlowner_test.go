package storage_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sqlInCapitals matches the statements tocsin writes, with keywords in
// capitals as the code writes them, so prose in strings does not trigger it.
var sqlInCapitals = regexp.MustCompile(`\bSELECT\b[\s\S]*\bFROM\b|\bINSERT INTO\b|\bUPDATE\b[\s\S]*\bSET\b|\bDELETE FROM\b|\bANALYZE\s+[a-z_]`)

// sqlAnyCase matches statements whatever the case of their keywords. A
// pair of keywords is not enough here ("select a file from the list",
// "update the settings, then set …", "delete from store: %w" are prose),
// so each form needs the structure only SQL has: a select list with SQL
// punctuation or several columns, a where clause that compares, a join
// with on, a column list before values, a set column with an equals sign,
// or a string that ends with a space after the opening keywords, as code
// writes a statement to append a table name to.
var sqlAnyCase = regexp.MustCompile(`(?i)` + sqlSelectList + `|` + sqlSelectClause + `|` + sqlInsert + `|` + sqlUpdate + `|` + sqlDelete + `|` + sqlOpening + `|` + sqlAnalyze)

// The parts of sqlAnyCase.
const (
	sqlIdent = `[a-z_]\w*(?:\.[a-z_]\w*)?`
	sqlParam = `(?:%[sdv]|\?|\$\d+)`
	sqlCall  = `(?:\((?:[^()]|\([^()]*\))*\))`
	sqlCast  = `(?:::[a-z_]+(?:\[\])?)`
	sqlAs    = `(?:\s+as\s+[a-z_]\w*)`
	sqlAlias = `(?:\s+(?:as\s+)?[a-z_]\w*)?`
	sqlTable = `(?:` + sqlIdent + sqlCall + `?|` + sqlParam + `)`
	// sqlCodeName is a column name that code writes and prose does not:
	// id, or a snake_case name (tenant_id, created_at).
	sqlCodeName = `(?:id|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b`
	// sqlColumn is a column of a select list that prose does not write: a
	// star, a qualified name, a call, a number, a quoted string, a
	// parameter, a cast or a code name.
	sqlColumn = `(?:(?:\*|[a-z_]\w*\.(?:\*|[a-z_]\w*)|` + sqlIdent + sqlCall + `|\d+|'[^']*'|` + sqlParam + `|` + sqlCodeName + `)` + sqlCast + `?|` + sqlIdent + sqlCast + `)` + sqlAs + `?`
	// sqlList is a select list: two columns or more, or one sqlColumn.
	sqlList = `(?:distinct\s+)?(?:(?:` + sqlColumn + `|` + sqlIdent + sqlAs + `?)(?:\s*,\s*(?:` + sqlColumn + `|` + sqlIdent + sqlAs + `?))+|` + sqlColumn + `)`
	// sqlWhere is where with a comparison: where a = …, where x in (…),
	// where $4, where exists (…).
	sqlWhere = `where\s+(?:not\s+)?(?:` + sqlIdent + sqlCall + `?\s*(?:=|<>|!=|<=|>=|<|>|@>|<@|&&|\bin\s*\(|\bis\s|\bi?like\b)|` + sqlParam + `|exists\s*\()`
	sqlJoin  = `(?:(?:natural\s+)?(?:inner|(?:left|right|full)(?:\s+outer)?|cross)\s+)?join\s+(?:lateral\s+)?` + sqlTable + sqlAlias + `\s+(?:on|using|where)\b`
	// sqlSelectList: select count(*) from events; select a, b from t
	// where …; select 1 from (…); "select * from " + table.
	sqlSelectList = `\bselect\s+` + sqlList + `\s+from\s*(?:\(|$|` + sqlTable + `(?:\s*(?:;|\)|$)|` + sqlAlias + `\s+(?:where|join|inner|left|right|full|cross|natural|group\s+by|order\s+by|limit|returning|for\s+update|union)\b))`
	// sqlSelectClause: any select list, then a table and a clause only SQL
	// writes: select id from alerts where tenant_id = $1.
	sqlSelectClause = `\bselect\s[^;]*?\bfrom\s+` + sqlTable + sqlAlias + `\s+(?:` + sqlWhere + `|` + sqlJoin + `|group\s+by|order\s+by|limit\s+(?:\d|` + sqlParam + `)|returning|for\s+update)`
	sqlInsert       = `\binsert\s+into\s+` + sqlTable + sqlAs + `?\s*(?:\(\s*` + sqlIdent + `(?:\s*,\s*` + sqlIdent + `)*\s*\)\s*)?(?:values|select|with|default\s+values)\b`
	sqlUpdate       = `\bupdate\s+` + sqlTable + sqlAlias + `\s+set\s*(?:$|` + sqlIdent + `\s*=)`
	sqlDelete       = `\bdelete\s+from\s+` + sqlTable + sqlAlias + `\s+(?:` + sqlWhere + `|using\s+` + sqlTable + sqlAlias + `\s+` + sqlWhere + `|returning\b)`
	// sqlAnalyze: a string that opens with analyze and tables (analyze
	// people, person_emails; vacuum analyze people), or with analyze and
	// a space, to append them to.
	sqlAnalyze = `^\s*(?:vacuum\s+)?analyze\s+(?:$|` + sqlIdent + `(?:\s*,\s*` + sqlIdent + `)*\s*(?:;|$))`
	// sqlOpening: "select count(*) from " + table, "delete from " + table.
	sqlOpening = `\b(?:select\s+(?:distinct\s+)?(?:` + sqlColumn + `|` + sqlIdent + sqlAs + `?)(?:\s*,\s*(?:` + sqlColumn + `|` + sqlIdent + sqlAs + `?))*\s+from|delete\s+from|insert\s+into)\s$`
)

// findSQL returns the part of s that is an SQL statement, or "".
func findSQL(s string) string {
	if m := sqlInCapitals.FindString(s); m != "" {
		return m
	}
	return sqlAnyCase.FindString(s)
}

// TestSQLLivesInStorage fails when a Go file outside storage/ has a string
// literal holding an SQL statement. Tests are included: they seed through
// the API and check through the API or storage's repositories (storage's
// own tests may use SQL). Only string literals are read (go/parser), so
// comments and prose do not count.
func TestSQLLivesInStorage(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	found, scanned, err := sqlLiterals(root, func(rel string) bool { return rel == "storage" })
	if err != nil {
		t.Fatal(err)
	}
	// The walk reached the tree: api/, activities/ and the rest.
	if scanned < 100 {
		t.Fatalf("only %d Go files scanned under %s", scanned, root)
	}
	files := make([]string, 0, len(found))
	for f := range found {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		t.Errorf("%s has SQL outside storage/ (move it into a repository there):\n\t%s", f, strings.Join(found[f], "\n\t"))
	}
}

// TestSQLDetectorFindsStoragesSQL checks the detector on the tree itself:
// storage/ holds the statements, so scanning it must find them, in the
// files that write each kind of statement.
func TestSQLDetectorFindsStoragesSQL(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	found, _, err := sqlLiterals(dir, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"alerts.go", "smoke_record.go", "workflow_starts.go", "outbox.go", "hooksubs/hooksubs.go"} {
		if len(found[f]) == 0 {
			t.Errorf("no SQL found in storage/%s", f)
		}
	}
}

// TestSQLDetectorFindsStoragesSQLInAnyCase checks the detector's
// case-blind part on every statement storage/ writes: lower-cased, each
// must still be found.
func TestSQLDetectorFindsStoragesSQLInAnyCase(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	statements := 0
	_, err = stringLiterals(dir, func(string) bool { return false }, func(rel string, line int, s string) {
		if !sqlInCapitals.MatchString(s) {
			return
		}
		statements++
		if sqlAnyCase.FindString(strings.ToLower(s)) == "" {
			t.Errorf("storage/%s:%d: not found in lower case: %s", rel, line, firstLine(s))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if statements < 100 {
		t.Fatalf("only %d statements found in storage/", statements)
	}
}

func TestSQLStatementPattern(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"SELECT id FROM alerts WHERE tenant_id = $1":                     true,
		"SELECT count(*)\n\t\tFROM events":                               true,
		"INSERT INTO people (tenant_id) VALUES ($1)":                     true,
		"UPDATE events SET dispatched_at = NULL":                         true,
		"DELETE FROM hook_attempts WHERE id = $1":                        true,
		"ANALYZE alert_recipients":                                       true,
		"analyze people, person_emails":                                  true,
		"Analyze the results":                                            false,
		"analyze ":                                                       true,
		"select id from alerts where tenant_id = $1":                     true,
		"select id from t":                                               true,
		"select id from t;":                                              true,
		"SELECT id FROM t":                                               true,
		"select tenant_id from people":                                   true,
		"select created_at from alerts as a order by id":                 true,
		"Select an id from the list":                                     false,
		"select it from the list":                                        false,
		"select the_id from the list":                                    false,
		"Select id from list to copy":                                    false,
		"Select id, name From people Where tenant_id = $1":               true,
		"select count(*) from events":                                    true,
		"select * from alerts":                                           true,
		"select a.id from alerts a join people p on p.id = a.person_id":  true,
		"select id from alerts order by id":                              true,
		"select count(*) from people p where ":                           true,
		"select 1 from (":                                                true,
		"insert into people (tenant_id, name) values ($1, $2)":           true,
		"Insert Into t Values (1)":                                       true,
		"insert into contact_new (line, person_id)\n\tselect line, id":   true,
		"update events set dispatched_at = null":                         true,
		"Update alerts a Set status = $2 where id = $1":                  true,
		"update alerts set ":                                             true,
		"select verification_status from ":                               true,
		"delete from ":                                                   true,
		"delete from hook_attempts where id = $1":                        true,
		"Delete From people p using groups g where g.id = p.group_id":    true,
		"Select a file from the list":                                    false,
		"select one from below":                                          false,
		"Select one from":                                                false,
		"Select one from the menu where it says Save":                    false,
		"Select one from the list left of the button":                    false,
		"Select the recipients from a group, then update their settings": false,
		"choose which fields to select from the form where required":     false,
		"select from alerts: %w":                                         false,
		"update the settings, then set the channel":                      false,
		"Update the list and set a name = yours":                         false,
		"update alerts: set status: %w":                                  false,
		"update by query %+v":                                            false,
		"insert into outbox: %w":                                         false,
		"Insert into the list (see below) values":                        false,
		"insert into lists (names) later":                                false,
		"delete from store: %w":                                          false,
		"Delete from the list where you find it":                         false,
		"a file named %s exists; delete it first to replace it":          false,
		"the FROM address of an email":                                   false,
		"Deleting a list keeps its contacts.":                            false,
	} {
		if got := findSQL(s) != ""; got != want {
			t.Errorf("%q: matched %v, want %v", s, got, want)
		}
	}
}

// sqlLiterals parses every Go file under root, except the folders skip
// names (by path relative to root) and hidden, build and vendor folders,
// and returns, per file, the lines of string literals holding SQL, and how
// many files it parsed.
func sqlLiterals(root string, skip func(rel string) bool) (map[string][]string, int, error) {
	found := map[string][]string{}
	scanned, err := stringLiterals(root, skip, func(rel string, line int, s string) {
		if m := findSQL(s); m != "" {
			found[rel] = append(found[rel], strconv.Itoa(line)+": "+firstLine(m))
		}
	})
	return found, scanned, err
}

// stringLiterals parses every Go file under root, except the folders skip
// names (by path relative to root) and hidden, build and vendor folders,
// calls visit with each string literal, and returns how many files it
// parsed.
func stringLiterals(root string, skip func(rel string) bool, visit func(rel string, line int, s string)) (int, error) {
	scanned := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skip(rel) || rel == "bin" || rel == "vendor" || rel == "node_modules" || (rel != "." && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				s = lit.Value
			}
			visit(rel, fset.Position(lit.Pos()).Line, s)
			return true
		})
		return nil
	})
	return scanned, err
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 80 {
		s = s[:80] + " …"
	}
	return s
}
