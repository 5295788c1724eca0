package rest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tocsin/tocsin/storage"
)

// MaxPageSize is the largest pageSize any paged operation accepts.
const MaxPageSize = 500

// PageParams is the paging convention shared by paged operations: page
// (default 1), pageSize (default 25, at most MaxPageSize) and sort
// (comma-separated property names, case-insensitive, '-' for descending).
type PageParams struct {
	Page     int    `query:"page" minimum:"1" maximum:"1000000" default:"1" doc:"Page number, starting at 1."`
	PageSize int    `query:"pageSize" minimum:"1" maximum:"500" default:"25" doc:"Items per page, at most 500."`
	Sort     string `query:"sort" maxLength:"200" doc:"Comma-separated property names, case-insensitive; a leading '-' sorts that property descending. Items without a value of a property come after those with one, in either direction." example:"lastName,-responseTime"`
}

// Offset is the number of items before the requested page.
func (p PageParams) Offset() int { return (p.Page - 1) * p.PageSize }

// Limit is the page size.
func (p PageParams) Limit() int { return p.PageSize }

// OrderBy parses a sort parameter against the allowed properties (lower-case
// property name to SQL expression) and returns an ORDER BY list ending with
// tieBreak, so paging is stable. A property without a value (an alert not
// sent, a recipient who has not responded) comes after those with one,
// ascending or descending: the expression of a property that may be NULL
// ends in " NULLS LAST" (nullsLast), which is kept after DESC. Only those
// say it, so a descending sort on a column that is never NULL can still be
// read backwards from its index. An unknown property is a 400 naming sort.
func OrderBy(sort string, allowed map[string]string, defaultOrder, tieBreak string) (string, error) {
	if strings.TrimSpace(sort) == "" {
		return defaultOrder + ", " + tieBreak, nil
	}
	var parts []string
	for _, raw := range strings.Split(sort, ",") {
		name := strings.TrimSpace(raw)
		desc := strings.HasPrefix(name, "-")
		name = strings.TrimPrefix(name, "-")
		col, ok := allowed[strings.ToLower(name)]
		if !ok {
			names := slices.Sorted(maps.Keys(allowed))
			return "", Invalid("query", "sort", fmt.Sprintf("unknown sort property %q; allowed: %s", name, strings.Join(names, ", ")), sort)
		}
		if desc {
			expr, nullable := strings.CutSuffix(col, nullsLast)
			col = expr + " DESC"
			if nullable {
				col += nullsLast
			}
		}
		parts = append(parts, col)
	}
	return strings.Join(append(parts, tieBreak), ", "), nil
}

// nullsLast ends the sort expression of a property that may be NULL.
const nullsLast = " NULLS LAST"

// SortBy is OrderBy with the sort properties, default order and tie break of s.
func SortBy(sort string, s storage.Sorting) (string, error) {
	return OrderBy(sort, s.Columns, s.Default, s.TieBreak)
}

// Paging is the paging block of every paged response.
type Paging struct {
	Page       int   `json:"page" doc:"The page returned." example:"1"`
	PageSize   int   `json:"pageSize" doc:"The page size used." example:"25"`
	TotalCount int64 `json:"totalCount" doc:"Items matching the request over all pages when totalCountExact is true. Otherwise at least this many match: counting stops after 10,000 items, or after the first item past this page when that is further, so that a page costs the same however many items match." example:"1"`
	TotalPages int64 `json:"totalPages" doc:"Pages at this page size: totalCount divided by pageSize, rounded up (at least this many when totalCountExact is false)." example:"1"`
	// TotalCountExact says whether TotalCount is exact.
	TotalCountExact bool `json:"totalCountExact" doc:"Whether totalCount is the exact number of matching items. When false, more may match, and at least one item follows this page, so a client that reads pages until page equals totalPages reads them all: the count is exact again by the last page." example:"true"`
}

// NewPaging fills a Paging from the request and the total.
func NewPaging(p PageParams, total storage.Total) Paging {
	pages := (total.N + int64(p.PageSize) - 1) / int64(p.PageSize)
	return Paging{Page: p.Page, PageSize: p.PageSize, TotalCount: total.N, TotalPages: pages, TotalCountExact: total.Exact}
}

// Items maps the rows of a page to their models; an empty page is an empty
// list, never null.
func Items[R, M any](rows []R, model func(R) M) []M {
	out := make([]M, len(rows))
	for i, r := range rows {
		out[i] = model(r)
	}
	return out
}
