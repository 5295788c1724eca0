package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/tocsin/tocsin/api/rest"
	"github.com/tocsin/tocsin/storage"
)

type sample struct {
	Name     string   `json:"name" minLength:"1" maxLength:"20"`
	Priority string   `json:"priority" enum:"Emergency,NonEmergency"`
	Count    int      `json:"count" minimum:"0"`
	Tags     []string `json:"tags,omitempty" maxItems:"3"`
}

type sampleInput struct {
	rest.PageParams
	Body sample
}

type sampleOutput struct {
	Body struct {
		Order string `json:"order"`
	}
}

func newAPI(t *testing.T) humatest.TestAPI {
	_, api := humatest.New(t)
	rest.Register(api, rest.Op{ID: "sample", Method: http.MethodPost, Path: "/sample", Public: true},
		func(ctx context.Context, in *sampleInput) (*sampleOutput, error) {
			order, err := rest.OrderBy(in.Sort, map[string]string{"lastname": "last_name", "firstname": "first_name", "sentat": "sent_at NULLS LAST"}, "last_name", "id")
			if err != nil {
				return nil, err
			}
			out := &sampleOutput{}
			out.Body.Order = order
			return out, nil
		})
	return api
}

func decodeProblem(t *testing.T, status int, body string) rest.ProblemDetails {
	t.Helper()
	var p rest.ProblemDetails
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("not a problem: %s", body)
	}
	if p.Status != status || !strings.HasPrefix(p.Type, rest.ProblemTypeBase) {
		t.Fatalf("problem %+v for status %d", p, status)
	}
	return p
}

func TestBadInputIsA400NamingTheField(t *testing.T) {
	t.Parallel()
	api := newAPI(t)
	valid := map[string]any{"name": "a", "priority": "Emergency", "count": 1}
	cases := []struct {
		name, path string
		body       any
		field      string
	}{
		{"page size too large", "/sample?pageSize=501", valid, "query.pageSize"},
		{"page zero", "/sample?page=0", valid, "query.page"},
		{"page not a number", "/sample?page=abc", valid, "query.page"},
		{"unknown sort property", "/sample?sort=shoeSize", valid, "query.sort"},
		{"missing field", "/sample", map[string]any{"priority": "Emergency", "count": 1}, "body"},
		{"unknown enum value", "/sample", map[string]any{"name": "a", "priority": "Whenever", "count": 1}, "body.priority"},
		{"wrong type", "/sample", map[string]any{"name": "a", "priority": "Emergency", "count": "many"}, "body.count"},
		{"too long", "/sample", map[string]any{"name": strings.Repeat("n", 21), "priority": "Emergency", "count": 1}, "body.name"},
		{"too many items", "/sample", map[string]any{"name": "a", "priority": "Emergency", "count": 1, "tags": []string{"a", "b", "c", "d"}}, "body.tags"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := api.Post(c.path, c.body)
			if res.Code != http.StatusBadRequest {
				t.Fatalf("status %d: %s", res.Code, res.Body)
			}
			if ct := res.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("content type %q", ct)
			}
			p := decodeProblem(t, 400, res.Body.String())
			found := false
			for _, f := range p.Errors {
				if strings.HasPrefix(f.Location, c.field) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no failure at %s in %s", c.field, res.Body)
			}
		})
	}
}

func TestMalformedJSONIsA400(t *testing.T) {
	t.Parallel()
	api := newAPI(t)
	res := api.Post("/sample", "Content-Type: application/json", strings.NewReader(`{"name": "a",`))
	if res.Code != http.StatusBadRequest {
		t.Fatalf("status %d: %s", res.Code, res.Body)
	}
	decodeProblem(t, 400, res.Body.String())
}

func TestSortParsing(t *testing.T) {
	t.Parallel()
	api := newAPI(t)
	valid := map[string]any{"name": "a", "priority": "Emergency", "count": 1}
	cases := map[string]string{
		"":                    "last_name, id",
		"lastName":            "last_name, id",
		"-LASTNAME,firstName": "last_name DESC, first_name, id",
		// A property that may have no value keeps it last either way; the
		// others are left for their indexes to serve backwards.
		"sentAt":  "sent_at NULLS LAST, id",
		"-sentAt": "sent_at DESC NULLS LAST, id",
	}
	for sort, want := range cases {
		res := api.Post("/sample?sort="+sort, valid)
		var out struct{ Order string }
		if err := json.Unmarshal(res.Body.Bytes(), &out); err != nil || out.Order != want {
			t.Errorf("sort %q: got %s, want %q", sort, res.Body, want)
		}
	}
}

func TestPagingDefaultsAndTotals(t *testing.T) {
	t.Parallel()
	p := rest.PageParams{Page: 3, PageSize: 25}
	if p.Offset() != 50 || p.Limit() != 25 {
		t.Fatalf("offset %d limit %d", p.Offset(), p.Limit())
	}
	if got := rest.NewPaging(p, storage.ExactTotal(51)); got.TotalPages != 3 || got.TotalCount != 51 || !got.TotalCountExact {
		t.Fatalf("%+v", got)
	}
	if got := rest.NewPaging(p, storage.ExactTotal(0)); got.TotalPages != 0 || !got.TotalCountExact {
		t.Fatalf("%+v", got)
	}
	// The document says how far totals count.
	field, _ := reflect.TypeFor[rest.Paging]().FieldByName("TotalCount")
	limit := strconv.Itoa(storage.CountLimit)
	if !strings.Contains(field.Tag.Get("doc"), limit[:len(limit)-3]+","+limit[len(limit)-3:]+" items") {
		t.Fatalf("the totalCount description does not name storage.CountLimit (%d): %s", storage.CountLimit, field.Tag.Get("doc"))
	}
	// An inexact total is a lower bound, and so are the pages it makes.
	if got := rest.NewPaging(p, storage.Total{N: 10_000}); got.TotalPages != 400 || got.TotalCount != 10_000 || got.TotalCountExact {
		t.Fatalf("%+v", got)
	}
}
