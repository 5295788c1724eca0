// Package ids holds the one rule for integers written as text (path
// parameters, form fields) and for row ids written in strings (paths,
// bodies, alert settings): a number written as it is written back, in
// canonical decimal, without sign, spaces or leading zeros.
package ids

import "strconv"

// Decimal returns the non-negative integer s writes, and false when s does
// not write one in canonical decimal ("0042", "+42", "-42", " 42", "4_2",
// "1.0" and anything beyond int64 do not; "0" does).
func Decimal(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, false
	}
	return n, true
}

// Parse returns the id s writes, and false when s is not an id as ids are
// written (a positive Decimal: "0042", "+42", " 42", "0" and anything
// beyond int64 are not).
func Parse(s string) (int64, bool) {
	id, ok := Decimal(s)
	if !ok || id == 0 {
		return 0, false
	}
	return id, true
}
