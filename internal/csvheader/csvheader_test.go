package csvheader_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/csvheader"
)

func TestColumns(t *testing.T) {
	column := csvheader.Fold("phone", "latitude", "longitude", "externalId")
	required := []string{"phone", "latitude"}
	got, err := csvheader.Columns([]string{"\ufeff Phone", "LATITUDE ", "externalid"}, required, column)
	if err != nil || !reflect.DeepEqual(got, []string{"phone", "latitude", "externalId"}) {
		t.Fatalf("%v %v", got, err)
	}
	for header, want := range map[string]string{
		"phone,latitude,phone":  `column "phone" appears twice`,
		"phone,latitude,Phone":  `column "phone" appears twice`,
		"phone,latitude,height": `unknown column "height"; the columns are phone, latitude, longitude, externalId`,
		"phone,longitude":       "the header lacks the required columns latitude",
		"longitude":             "the header lacks the required columns phone, latitude",
		"phone,lat\x00itude":    "column 2 of the header holds a NUL character: the file is not a CSV text file",
		"phone,\xfflatitude":    "column 2 of the header is not UTF-8 text",
	} {
		_, err := csvheader.Columns(strings.Split(header, ","), required, column)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", header, err, want)
		}
	}
}

func TestSniff(t *testing.T) {
	for head, want := range map[string]string{
		"phone,latitude\n+1555,4\x005\n": "",
		"firstName,lastName":             "",
		"p\x00h\x00o\x00n\x00e\x00":      "column 1 of the header holds a NUL character: the file is not a CSV text file",
		"a,b,c\x00\x00\x00":              "column 3 of the header holds a NUL character: the file is not a CSV text file",
	} {
		got := ""
		if err := csvheader.Sniff([]byte(head)); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q: %q, want %q", head, got, want)
		}
	}
}

func TestPreview(t *testing.T) {
	forty := strings.Repeat("é", csvheader.PreviewRunes)
	for in, want := range map[string]string{
		"":                          "",
		"ada@":                      "ada@",
		forty:                       forty,
		forty + "x":                 forty + "…",
		forty + "\xff\xfe":          forty + "…",
		"a\x00b\xffc":               "a\uFFFDb\uFFFDc",
		strings.Repeat("\xff", 100): "\uFFFD…",
	} {
		if got := csvheader.Preview(in); got != want {
			t.Errorf("Preview(%q) = %q, want %q", in, got, want)
		}
	}
}
