// Package ids holds the one rule for row ids written in strings (paths,
// bodies, alert settings): a positive decimal number written as it is
// written back, without sign, spaces or leading zeros.
package ids

import "strconv"

// Parse returns the id s writes, and false when s is not an id as ids are
// written ("0042", "+42", " 42", "0" and anything beyond int64 are not).
func Parse(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != s {
		return 0, false
	}
	return id, true
}
