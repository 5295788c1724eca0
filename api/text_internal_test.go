package api

import (
	"bytes"
	"testing"
	"unicode"
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
