package directory

import (
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/locale"
)

func TestNormalizePhone(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, region, want string }{
		{"+12025550123", "", "+12025550123"},
		{"+1 (202) 555-0123", "", "+12025550123"},
		{"(202) 555-0123", "US", "+12025550123"},
		{"020 7946 0958", "gb", "+442079460958"},
		{"+33 1 42 68 53 00", "", "+33142685300"},
		{"2025550123", "", ""},      // no country
		{"+1 555 123 4567", "", ""}, // not a valid number
		{"hello", "", ""},
		{"+", "", ""},
		{"", "US", ""},
	}
	for _, c := range cases {
		got, err := normalizePhone(c.in, c.region)
		if c.want == "" {
			if err == nil {
				t.Errorf("%q accepted as %q", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q/%s: %q, %v; want %q", c.in, c.region, got, err, c.want)
		}
	}
}

func TestZonesAndLanguages(t *testing.T) {
	t.Parallel()
	zones := timeZones(time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC))
	if len(zones) != len(zoneNames) {
		t.Fatalf("%d of %d zones load from the embedded data", len(zones), len(zoneNames))
	}
	for _, z := range zones {
		switch z.ID {
		case "America/New_York":
			if z.UTCOffset != "-05:00" || z.IsDST || z.Abbreviation != "EST" {
				t.Errorf("%+v", z)
			}
		case "Australia/Sydney":
			if z.UTCOffset != "+11:00" || !z.IsDST {
				t.Errorf("%+v", z)
			}
		case "Asia/Kathmandu":
			if z.OffsetMinutes != 345 {
				t.Errorf("%+v", z)
			}
		}
	}
	for _, z := range zoneNames {
		if got, err := locale.TimeZone(z); got != z || err != nil {
			t.Errorf("listed zone %s: users take %q, %v", z, got, err)
		}
	}
	for _, l := range languages {
		if got, err := locale.Language(l.Code); l.Name == "" || l.NativeName == "" || got != l.Code || err != nil {
			t.Errorf("%+v: users take %q, %v", l, got, err)
		}
	}
}
