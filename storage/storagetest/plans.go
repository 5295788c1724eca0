package storagetest

import (
	"encoding/json"
	"slices"
	"testing"
)

// RowsRead sums the rows that the scans of tables read in plan, a plan of
// EXPLAIN (ANALYZE, FORMAT JSON) (storage.Explain): those they kept and
// those their filters and index rechecks removed, over all loops. It also
// counts the sequential scans among them.
func RowsRead(t testing.TB, plan string, tables ...string) (read, seqScans int) {
	t.Helper()
	type node struct {
		Type      string  `json:"Node Type"`
		Relation  string  `json:"Relation Name"`
		Rows      float64 `json:"Actual Rows"`
		Loops     float64 `json:"Actual Loops"`
		Filtered  float64 `json:"Rows Removed by Filter"`
		Rechecked float64 `json:"Rows Removed by Index Recheck"`
		Plans     []node  `json:"Plans"`
	}
	var doc []struct {
		Plan node `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("plan: %v\n%s", err, plan)
	}
	var walk func(n node)
	walk = func(n node) {
		if slices.Contains(tables, n.Relation) {
			read += int((n.Rows + n.Filtered + n.Rechecked) * n.Loops)
			if n.Type == "Seq Scan" {
				seqScans++
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(doc[0].Plan)
	return read, seqScans
}
