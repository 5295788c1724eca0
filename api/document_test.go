package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/api"
)

// decodeDocument decodes the OpenAPI document into spec.
func decodeDocument(t *testing.T, spec any) {
	t.Helper()
	doc, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(doc, spec); err != nil {
		t.Fatal(err)
	}
}

// TestDocumentHasEveryOperation checks that the OpenAPI document declares
// every operation of the interface documents with its exact id, method and path.
func TestDocumentHasEveryOperation(t *testing.T) {
	t.Parallel()
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	decodeDocument(t, &spec)
	f, err := os.Open("testdata/operations.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 72 {
		t.Fatalf("operations.tsv has %d rows, want a header and 71 operations", len(rows))
	}
	for _, row := range rows[1:] {
		id, method, path := row[1], strings.ToLower(row[2]), row[3]
		op, ok := spec.Paths[path][method]
		if !ok {
			t.Errorf("%s: %s %s is not in the document", id, row[2], path)
			continue
		}
		if op.OperationID != id {
			t.Errorf("%s %s has operationId %q, want %q", row[2], path, op.OperationID, id)
		}
	}
}

// TestCommittedDocumentIsCurrent fails when openapi.json no longer matches
// the code; run `make openapi` to regenerate it.
func TestCommittedDocumentIsCurrent(t *testing.T) {
	t.Parallel()
	doc, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, committed) {
		t.Fatal("openapi.json is stale: run `make openapi` and commit it")
	}
}

// TestDocumentHasEveryModel checks that every model the interface documents
// name is a schema of the document, and that object schemas have fields.
func TestDocumentHasEveryModel(t *testing.T) {
	t.Parallel()
	var spec struct {
		Components struct {
			Schemas map[string]struct {
				Type       any            `json:"type"`
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	decodeDocument(t, &spec)
	list, err := os.ReadFile("testdata/models.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range strings.Split(string(list), "\n") {
		name = strings.TrimSpace(name)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		n++
		s, ok := spec.Components.Schemas[name]
		if !ok {
			t.Errorf("model %s is not in the document", name)
			continue
		}
		if s.Type == "object" && len(s.Properties) == 0 {
			t.Errorf("model %s has no fields", name)
		}
	}
	if n < 200 {
		t.Fatalf("models.txt lists only %d names", n)
	}
}
