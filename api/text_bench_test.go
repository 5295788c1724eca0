package api

import (
	"fmt"
	"strings"
	"testing"
)

// manyKeys is a JSON object of n properties, size bytes long, whose names
// start with prefix.
func manyKeys(n, size int, prefix string) []byte {
	pair := len(`"` + prefix + `00000":"",`)
	per := (size-1)/n - pair
	extra := size - 1 - n*(per+pair)
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		pad := per
		if i == 0 {
			pad += extra
		}
		fmt.Fprintf(&b, `"%s%05d":"%s"`, prefix, i, strings.Repeat("x", pad))
	}
	b.WriteString("}")
	return []byte(b.String())
}

// BenchmarkBadJSON walks a 1 MiB body of 20,000 properties, as every JSON
// body is walked before its operation runs: names in lower case fold
// without allocating, names with capitals cost one allocation each.
func BenchmarkBadJSON(b *testing.B) {
	for _, prefix := range []string{"unknown", "Unknown"} {
		body := manyKeys(20000, 1<<20, prefix)
		b.Run(prefix, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, msg := badJSON(body); msg != "" {
					b.Fatal(msg)
				}
			}
		})
	}
}
