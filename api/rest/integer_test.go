package rest_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/tocsin/tocsin/api/rest"
)

// TestPathIntegerRefusalsSayWhatIsWrong: a path integer not written in
// canonical decimal is told so; one written canonically but beyond 64
// bits, which is digits without sign or leading zeros, is told the
// largest number taken instead.
func TestPathIntegerRefusalsSayWhatIsWrong(t *testing.T) {
	for _, v := range []string{"0", "1", "9223372036854775807"} {
		if p := rest.CheckPathInteger("id", v); p != nil {
			t.Errorf("%q refused: %+v", v, p.Errors)
		}
	}
	for v, want := range map[string]string{
		"9223372036854775808":  rest.MsgIntegerTooLarge,
		"99999999999999999999": rest.MsgIntegerTooLarge,
		"09223372036854775808": rest.MsgCanonicalInteger,
		"+9223372036854775808": rest.MsgCanonicalInteger,
		"01":                   rest.MsgCanonicalInteger,
		"abc":                  rest.MsgCanonicalInteger,
		"":                     rest.MsgCanonicalInteger,
	} {
		f := refusal(t, rest.CheckPathInteger("alertId", v))
		if f.Location != "path.alertId" || f.ErrorMessage != want || f.AttemptedValue != v {
			t.Errorf("%q: %+v, want %q", v, f, want)
		}
	}
	if want := "must be at most " + strconv.FormatInt(math.MaxInt64, 10); rest.MsgIntegerTooLarge[:len(want)] != want {
		t.Errorf("%q does not give the largest int64", rest.MsgIntegerTooLarge)
	}
}
