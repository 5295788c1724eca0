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

// sqlStatement matches the statements tocsin writes, with keywords in
// capitals as the code writes them, so prose in strings does not trigger it.
var sqlStatement = regexp.MustCompile(`\bSELECT\b[\s\S]*\bFROM\b|\bINSERT INTO\b|\bUPDATE\b[\s\S]*\bSET\b|\bDELETE FROM\b`)

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
	for _, f := range []string{"alerts.go", "smoke_record.go", "workflow_starts.go", "event_dispatch.go", "hooksubs/hooksubs.go"} {
		if len(found[f]) == 0 {
			t.Errorf("no SQL found in storage/%s", f)
		}
	}
}

func TestSQLStatementPattern(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"SELECT id FROM alerts WHERE tenant_id = $1": true,
		"SELECT count(*)\n\t\tFROM events":           true,
		"INSERT INTO people (tenant_id) VALUES ($1)": true,
		"UPDATE events SET dispatched_at = NULL":     true,
		"DELETE FROM hook_attempts WHERE id = $1":    true,
		"Select a file from the list":                false,
		"update the settings, then set the channel":  false,
		"the FROM address of an email":               false,
		"Deleting a list keeps its contacts.":        false,
	} {
		if got := sqlStatement.MatchString(s); got != want {
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
			if m := sqlStatement.FindString(s); m != "" {
				pos := fset.Position(lit.Pos())
				found[rel] = append(found[rel], strconv.Itoa(pos.Line)+": "+firstLine(m))
			}
			return true
		})
		return nil
	})
	return found, scanned, err
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
