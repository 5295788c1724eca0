package rest_test

import (
	"errors"
	"math"
	"testing"

	"github.com/tocsin/tocsin/api/rest"
)

// refusal is the one failure of err, a problem, or fails t.
func refusal(t *testing.T, err error) rest.ValidationFailure {
	t.Helper()
	var p *rest.ProblemDetails
	if !errors.As(err, &p) || p.Status != 400 || len(p.Errors) != 1 {
		t.Fatalf("not a 400 naming one field: %v", err)
	}
	return p.Errors[0]
}

func TestFormBoolean(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "True": true, "TRUE": true, "false": false, "False": false, "FALSE": false} {
		if got, err := rest.FormBoolean("b", v); err != nil || got != want {
			t.Errorf("%q: %v, %v", v, got, err)
		}
	}
	for _, v := range []string{"", "1", "0", "t", "f", "yes", "on", " true", "false\r\n", "tRuE"} {
		_, err := rest.FormBoolean("makePublic", v)
		if f := refusal(t, err); f.Location != "body.makePublic" || f.ErrorMessage != "must be true or false" || f.AttemptedValue != v {
			t.Errorf("%q: %+v", v, f)
		}
	}
}

func TestFormInteger(t *testing.T) {
	for _, c := range []struct {
		v         string
		low, high int64
		want      int64
	}{{"0", 0, math.MaxInt64, 0}, {"42", 1, 100, 42}, {"100", 1, 100, 100}, {"9223372036854775807", 0, math.MaxInt64, math.MaxInt64}} {
		if got, err := rest.FormInteger("n", c.v, c.low, c.high); err != nil || got != c.want {
			t.Errorf("%q: %v, %v", c.v, got, err)
		}
	}
	for _, c := range []struct {
		v         string
		low, high int64
		msg       string
	}{
		{"0", 1, 100, "must be a whole number from 1 to 100, in digits without sign, spaces or leading zeros"},
		{"101", 1, 100, "must be a whole number from 1 to 100, in digits without sign, spaces or leading zeros"},
		{"+5", 0, math.MaxInt64, "must be a whole number of 0 or more, in digits without sign, spaces or leading zeros"},
		{"9223372036854775808", 0, math.MaxInt64, "must be a whole number from 0 to 9223372036854775807, in digits without sign, spaces or leading zeros"},
		{"99999999999999999999", 1, 100, "must be a whole number from 1 to 100, in digits without sign, spaces or leading zeros"},
	} {
		_, err := rest.FormInteger("MaxWidth", c.v, c.low, c.high)
		if f := refusal(t, err); f.Location != "body.MaxWidth" || f.ErrorMessage != c.msg || f.AttemptedValue != c.v {
			t.Errorf("%q: %+v", c.v, f)
		}
	}
	for _, v := range []string{"", "05", "-1", " 5", "5 ", "5.0", "1e3", "x", "9223372036854775808"} {
		if _, err := rest.FormInteger("n", v, 0, math.MaxInt64); err == nil {
			t.Errorf("%q taken", v)
		}
	}
}
