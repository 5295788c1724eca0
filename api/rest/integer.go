package rest

import "github.com/tocsin/tocsin/internal/ids"

// IntegerPattern is the pattern of a path parameter that holds an integer
// in a string, as the directory's ids do (its interface types them as
// strings): the server holds such a parameter to the rule of integer path
// parameters (see CheckPathInteger), and the document shows it.
const IntegerPattern = `^(0|[1-9][0-9]*)$`

// MsgCanonicalInteger is what an integer written as text must be.
const MsgCanonicalInteger = "must be a whole number written in canonical decimal: digits only, without sign, spaces or leading zeros (1, not 01, +1 or 1.0)"

// MsgIntegerTooLarge is what an integer written canonically but beyond
// 64 bits must be instead.
const MsgIntegerTooLarge = "must be at most 9223372036854775807, the largest 64-bit integer"

// CheckPathInteger refuses v, the value of the integer path parameter name,
// unless it writes a number in canonical decimal (ids.Decimal): 0001, +1,
// 1.0 or %201 would otherwise name the same row as 1, or nothing at all,
// depending on the operation. The problem is a 400 naming the parameter;
// digits written canonically but beyond 64 bits are told the largest
// number taken.
func CheckPathInteger(name, v string) *ProblemDetails {
	if _, ok := ids.Decimal(v); ok {
		return nil
	}
	if beyondInt64(v) {
		return Invalid("path", name, MsgIntegerTooLarge, v)
	}
	return Invalid("path", name, MsgCanonicalInteger, v)
}

// beyondInt64 reports whether v is written as IntegerPattern says, digits
// without a leading zero, but names a number too large for an int64.
func beyondInt64(v string) bool {
	if v == "" || v[0] == '0' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	_, ok := ids.Decimal(v)
	return !ok
}
