package rest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tocsin/tocsin/api/rest"
)

func TestBoundKeepsProblemsSmall(t *testing.T) {
	big := map[string]any{}
	for i := 0; i < 5000; i++ {
		big[fmt.Sprint("k", i)] = strings.Repeat("v", 100)
	}
	var failures []rest.ValidationFailure
	for i := 0; i < 5000; i++ {
		failures = append(failures, rest.Failure("body", strings.Repeat("n", 5000), strings.Repeat("m", 5000), big))
	}
	p := rest.Problem(http.StatusBadRequest, strings.Repeat("d\xff", 10000), failures...)
	p.Bound()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 64<<10 || len(p.Errors) != rest.MaxFailures || p.MoreErrors != 5000-rest.MaxFailures || !utf8.ValidString(p.Detail) {
		t.Fatalf("%d bytes, %d errors, %d more", len(b), len(p.Errors), p.MoreErrors)
	}
	if v := p.Errors[0].AttemptedValue; v != "an object of 5000 properties" {
		t.Fatalf("attempted value %v", v)
	}
}

func TestUnavailableOnlyWhenDown(t *testing.T) {
	answered := fmt.Errorf("find: %w", &pq.Error{Code: "22021", Message: `invalid byte sequence for encoding "UTF8": 0x00`})
	p := rest.Unavailable("the database", answered)
	if p.Status != 500 || strings.Contains(p.Detail, "pq") || strings.Contains(p.Detail, "UTF8") || !errors.Is(p.Cause(), answered) {
		t.Fatalf("an answered query error: %d %q", p.Status, p.Detail)
	}
	down := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	p = rest.Unavailable("the database", down)
	if p.Status != 503 || p.Detail != "the database is unavailable" || p.GetHeaders().Get("Retry-After") == "" {
		t.Fatalf("a refused connection: %d %q", p.Status, p.Detail)
	}
	if p := rest.Unavailable("the database", &pq.Error{Code: "57P01"}); p.Status != 503 {
		t.Fatalf("an admin shutdown: %d", p.Status)
	}
	if se := rest.NewError(500, "unexpected error", answered); strings.Contains(se.Error(), "pq") {
		t.Fatalf("a 500 carries the driver's text: %s", se.Error())
	}
}
