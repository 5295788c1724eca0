package model

import (
	"strings"
	"testing"
)

// TestCountryTakesTheISO3166Codes: of the 676 pairs of letters, the 249
// codes ISO 3166-1 assigns and XK are country codes, and no other.
func TestCountryTakesTheISO3166Codes(t *testing.T) {
	const iso = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
		"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
		"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
		"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT " +
		"MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
		"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG " +
		"UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW XK"
	want := map[string]bool{}
	for _, c := range strings.Fields(iso) {
		want[c] = true
	}
	if len(want) != 250 {
		t.Fatalf("%d codes listed", len(want))
	}
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			code := string([]rune{a, b})
			got, msg := country(code)
			if (msg == "") != want[code] || msg == "" && got != code {
				t.Errorf("%s: %q %q", code, got, msg)
			}
			if lower, _ := country(strings.ToLower(code)); lower != got {
				t.Errorf("%s in lower case: %q", code, lower)
			}
		}
	}
	for _, c := range []string{"", "1", "12", "USA", "U1", "001", "419"} {
		if _, msg := country(c); msg == "" {
			t.Errorf("%q taken", c)
		}
	}
}
