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
