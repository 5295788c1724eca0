package storage

// Sorting describes how a list may be ordered: the sort properties (lower
// case) and the SQL expression of each, the order when none is asked for,
// and the tie break that ends every order so paging is stable. The
// expression of a property that may be NULL ends in " NULLS LAST", so that
// items without a value come last in either direction.
type Sorting struct {
	Columns  map[string]string
	Default  string
	TieBreak string
}
