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

// sqlTolerated lists the files of api/ that still hold SQL while it moves
// into storage. It only shrinks: the test fails for a file on it that no
// longer has SQL (remove it then), for any file of another folder, and for
// every file with SQL that is not on it.
var sqlTolerated = map[string]bool{
	// api/: the tests still seed and check with SQL.
}

// TestSQLLivesInStorage fails when a Go file outside storage/ has a string
// literal holding an SQL statement. Tests are included: they seed and check
// through the API or storage's repositories (storage's own tests may use
// SQL). Only string literals are read (go/parser), so comments and prose do
// not count.
func TestSQLLivesInStorage(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "storage" || rel == "bin" || rel == "vendor" || rel == "node_modules" || (rel != "." && strings.HasPrefix(d.Name(), ".")) {
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
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(found))
	for f := range found {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if !sqlTolerated[f] {
			t.Errorf("%s has SQL outside storage/ (move it into a repository there):\n\t%s", f, strings.Join(found[f], "\n\t"))
		}
	}
	for f := range sqlTolerated {
		if !strings.HasPrefix(f, "api/") {
			t.Errorf("%s: only files of api/ may wait on sqlTolerated", f)
		}
		if len(found[f]) == 0 {
			t.Errorf("%s no longer has SQL: remove it from sqlTolerated", f)
		}
	}
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
