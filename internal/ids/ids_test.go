package ids

import "testing"

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{
		"1": 1, "42": 42, "9223372036854775807": 9223372036854775807,
		"": 0, "0": 0, "042": 0, "0005": 0, "+42": 0, "-42": 0, " 42": 0, "42 ": 0, "4_2": 0, "9223372036854775808": 0, "x": 0,
	} {
		got, ok := Parse(s)
		if got != want || ok != (want != 0) {
			t.Errorf("Parse(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
}
