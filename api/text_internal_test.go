package api

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/danielgtaylor/huma/v2"
)

// TestFoldNameIsEqualFold: two property names fold alike exactly when
// bytes.EqualFold (the equality encoding/json matches names to fields by)
// says they are equal, over every rune.
func TestFoldNameIsEqualFold(t *testing.T) {
	byFold := map[string]rune{}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		s := string(r)
		f := foldName(s)
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if foldName(string(o)) != f || !bytes.EqualFold([]byte(s), []byte(string(o))) {
				t.Fatalf("%U and %U: folds %q and %q", r, o, f, foldName(string(o)))
			}
		}
		if first, ok := byFold[f]; ok && !bytes.EqualFold([]byte(string(first)), []byte(s)) {
			t.Fatalf("%U and %U fold alike (%q) but are not EqualFold", first, r, f)
		} else if !ok {
			byFold[f] = r
		}
	}
	for _, c := range []struct{ a, b string }{
		{"subject", "Subject"}, {"subject", "SUBJECT"}, {"subject", "\u017fubject"}, {"x-api-key", "X-Api-\u212aey"},
		{"straße", "STRASSE"}, {"ǅ", "ǆ"}, {"İd", "id"}, {"Σ", "ς"},
	} {
		if want, got := bytes.EqualFold([]byte(c.a), []byte(c.b)), foldName(c.a) == foldName(c.b); want != got {
			t.Errorf("%q and %q: EqualFold %v, fold alike %v", c.a, c.b, want, got)
		}
	}
	if s := "already-folded_name1"; foldName(s) != s || testing.AllocsPerRun(10, func() { foldName(s) }) != 0 {
		t.Errorf("a lower-case ASCII name is not its own fold without allocating")
	}
}

// TestBadJSONFoldsStructNamesOnly: names that differ only in case are one
// property in an object that decodes into a struct, found through $refs,
// arrays, maps and a property given in another case; a map's keys, and an
// object whose schema is unknown, refuse only the same name twice.
func TestBadJSONFoldsStructNamesOnly(t *testing.T) {
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	type inner struct {
		Name string `json:"name"`
	}
	type outer struct {
		Subject string            `json:"subject"`
		Custom  map[string]string `json:"customFields"`
		Props   map[string]any    `json:"properties"`
		Items   []inner           `json:"items"`
		ByName  map[string]inner  `json:"byName"`
		Any     any               `json:"any"`
	}
	schema := reg.Schema(reflect.TypeOf(outer{}), true, "")
	if schema.Ref == "" {
		t.Fatal("the schema is not a $ref: the test would not follow one")
	}
	cases := []struct{ body, field, msg string }{
		{`{"subject":"a","Subject":"b"}`, "Subject", `as "subject" and as "Subject"`},
		{`{"Items":[{"name":"a"},{"name":"a","NAME":"b"}]}`, "Items[1].NAME", "differ only in case"},
		{`{"byName":{"k":{"name":"a","Name":"b"}}}`, "byName.k.Name", "differ only in case"},
		{`{"customFields":{"Building":"A","building":"B"}}`, "", ""},
		{`{"customFields":{"building":"A","building":"B"}}`, "customFields.building", "is given more than once"},
		{`{"properties":{"NAME":"A","Name":{"x":1,"X":2}}}`, "", ""},
		{`{"properties":{"NAME":"A","NAME":"B"}}`, "properties.NAME", "is given more than once"},
		{`{"byName":{"K":{"name":"a"},"k":{"name":"b"}}}`, "", ""},
		{`{"any":{"a":1,"A":2}}`, "", ""},
		{`{"any":{"a":1,"a":2}}`, "any.a", "is given more than once"},
	}
	for _, c := range cases {
		field, msg := badJSON([]byte(c.body), reg, schema)
		if field != c.field || !strings.Contains(msg, c.msg) || (c.msg == "") != (msg == "") {
			t.Errorf("%s: %q %q, want %q %q", c.body, field, msg, c.field, c.msg)
		}
	}
	// Without a schema, only the same name twice.
	if field, msg := badJSON([]byte(`{"subject":"a","Subject":"b"}`), nil, nil); msg != "" {
		t.Errorf("no schema: %q %q", field, msg)
	}
	if field, msg := badJSON([]byte(`{"a":{"b":1,"b":2}}`), nil, nil); field != "a.b" || msg != "is given more than once" {
		t.Errorf("no schema: %q %q", field, msg)
	}
}
