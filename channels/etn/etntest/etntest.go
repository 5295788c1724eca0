// Package etntest holds address-point files that tests of the ETN import
// share, so the parser's tests and the API's end-to-end tests check one file.
package etntest

// NumberedLines is an address-point file whose rows span several lines:
// quoted line breaks, empty lines and both line endings. Its rows on lines
// 2-3 and 7-10 are points (the second with a multi-line name and address),
// and those on lines 5 (a bad phone), 11 (a latitude past 90) and 12 (a
// bare quote) are refused.
const NumberedLines = "phone,latitude,longitude,name,address\r\n" + // line 1
	"+15550000001,45.5,-122.6,Mill,\"1 Main St\r\nBack door\"\r\n" + // 2-3
	"\r\n" + // 4
	"555,45.5,-122.6,Bad phone,\r\n" + // 5
	"\n" + // 6
	"+15550000002,45.5,-122.6,\"Pump\nhouse\",\"2\nMain\nSt\"\n" + // 7-10
	"+15550000003,95,-122.6,Bad latitude,\n" + // 11
	"+15550000004,4\"5,-122.6,Bare quote,\n" // 12

// RefusedLines are the lines of NumberedLines' refused rows.
var RefusedLines = []int{5, 11, 12}
