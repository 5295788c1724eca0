package rest

import (
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
		{`{"limits":{"a":1e0}}`, "limits.a", "expected an integer between"},
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
