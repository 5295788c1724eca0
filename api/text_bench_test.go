package api

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
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
// body is walked before its operation runs: as a map (its keys compared as
// given) and as a struct (names folded: in lower case without allocating,
// with capitals at one allocation each).
func BenchmarkBadJSON(b *testing.B) {
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	type filter struct {
		Subject string `json:"subject"`
		Name    string `json:"name"`
		Status  string `json:"status"`
	}
	schemas := map[string]*huma.Schema{
		"map":    reg.Schema(reflect.TypeOf(map[string]string{}), true, ""),
		"struct": reg.Schema(reflect.TypeOf(filter{}), true, ""),
	}
	for _, kind := range []string{"map", "struct"} {
		for _, prefix := range []string{"unknown", "Unknown"} {
			body := manyKeys(20000, 1<<20, prefix)
			b.Run(kind+"/"+prefix, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, msg := badJSON(body, reg, schemas[kind]); msg != "" {
						b.Fatal(msg)
					}
				}
			})
		}
	}
}
