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

func TestDecimal(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "1": true, "42": true, "9223372036854775807": true,
		"": false, "00": false, "01": false, "+1": false, "-1": false, "-0": false, " 1": false, "1 ": false,
		"1.0": false, "1e3": false, "0x1": false, "1_000": false, "9223372036854775808": false, "٣": false,
	} {
		if _, ok := Decimal(s); ok != want {
			t.Errorf("Decimal(%q) ok = %v; want %v", s, ok, want)
		}
	}
}
