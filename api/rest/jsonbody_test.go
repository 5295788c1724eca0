package rest

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestUnmarshalJSONNamesTheFieldThatDoesNotFit(t *testing.T) {
	type target struct {
		Groups [][]struct {
			ID uint8 `json:"id"`
		} `json:"groups"`
		Limits map[string]int32 `json:"limits"`
	}
	cases := []struct{ body, field, message string }{
		{`{"groups":[[{"id":1}], [ {"id":1} , {"id": 256 } ]]}`, "groups[1][1].id", "expected an integer between 0 and 255"},
		{`{"limits":{"a: b":2147483648}}`, "limits.a: b", "expected an integer between -2147483648 and 2147483647"},
		{`{"limits":{"a":1.5e0}}`, "limits.a", "expected an integer between"},
		{`{"limits":{"a":2147483648.0}}`, "limits.a", "expected an integer between -2147483648 and 2147483647"},
		{`{"limits":{"a":1e20}}`, "limits.a", "expected an integer between -2147483648 and 2147483647"},
		{`{"groups":{"id":1}}`, "groups", "expected array"},
	}
	for _, c := range cases {
		var v target
		err := UnmarshalJSON([]byte(c.body), &v)
		if err == nil {
			t.Fatalf("%s: no error", c.body)
		}
		field, message, ok := bodyField(err.Error())
		if !ok || field != c.field || !strings.HasPrefix(message, c.message) {
			t.Errorf("%s: %q names %q with %q, want %q with %q", c.body, err, field, message, c.field, c.message)
		}
	}
	var v any
	if err := UnmarshalJSON([]byte(`{"a":[1, 1e400 ]}`), &v); err == nil || !strings.HasPrefix(err.Error(), "body.a[1]: expected a number") {
		t.Errorf("1e400 into an interface: %v", err)
	}
	if err := UnmarshalJSON([]byte(`{"a":`), &v); err == nil || strings.HasPrefix(err.Error(), "body.") {
		t.Errorf("a syntax error is left as it is: %v", err)
	}
}

// TestWholeNumbersFillIntegerFields: a JSON number is a number however it
// is written; a whole one fills an integer field, a float field reads the
// same value either way, and strings are left alone.
func TestWholeNumbersFillIntegerFields(t *testing.T) {
	type target struct {
		N    int64   `json:"n"`
		U    uint8   `json:"u"`
		F    float64 `json:"f"`
		S    string  `json:"s"`
		List []int   `json:"list"`
	}
	var v target
	body := `{"u":2.55e2,"n":-25e-1}`
	if err := UnmarshalJSON([]byte(body), &v); err == nil || !strings.HasPrefix(err.Error(), "body.n: expected an integer") {
		t.Fatalf("%s: %v", body, err)
	}
	body = `{"n":-1.0e3,"u":2.55E+2,"f":-0.0,"s":"1.0 and \"2e1\"","list":[1.0, 10e-1,0.0, 100E-2 ,12345678901234567.0]}`
	if err := UnmarshalJSON([]byte(body), &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if v.N != -1000 || v.U != 255 || v.F != 0 || !math.Signbit(v.F) || v.S != `1.0 and "2e1"` ||
		fmt.Sprint(v.List) != "[1 1 0 1 12345678901234567]" {
		t.Fatalf("%s decoded as %+v", body, v)
	}
	for n, want := range map[string]string{
		"1.0": "1", "-1.0": "-1", "1e3": "1000", "1E+3": "1000", "12.5e1": "125", "1000e-3": "1", "0.000": "0", "-0.0": "-0",
		"9223372036854775807.0": "9223372036854775807", "18446744073709551615e0": "18446744073709551615",
		"1": "", "1.5": "", "1e-1": "", "18446744073709551616.0": "", "1e20": "", "1e400": "", "1e-400": "",
		"01.0": "", "1.": "", ".5": "", "1e": "", "1e+-2": "", "1.0.0": "", "--1.0": "", "1.0e99999999999999999999": "",
	} {
		got, ok := wholeNumber([]byte(n))
		if ok != (want != "") || got != want {
			t.Errorf("%s: %q %v, want %q", n, got, ok, want)
		}
	}
}
