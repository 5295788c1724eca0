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

// TestDocumentHasEveryOperation checks that the OpenAPI document declares
// every operation of the interface documents with its exact id, method and path.
func TestDocumentHasEveryOperation(t *testing.T) {
	doc, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(doc, &spec); err != nil {
		t.Fatal(err)
	}
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
