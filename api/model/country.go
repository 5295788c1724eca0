package model

import (
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"golang.org/x/text/language"
)

// CountryCode is an ISO 3166-1 alpha-2 country code: the code of a country
// or territory (US, GB, DE, AQ, PR), or XK, the user-assigned code CLDR,
// libphonenumber and the European Commission use for Kosovo, which ISO
// does not list. It is read in either case and kept in capitals. Its check (Resolve) runs on input only: what was stored
// before it is answered as it is.
type CountryCode string

// Schema implements huma.SchemaProvider.
func (CountryCode) Schema(r huma.Registry) *huma.Schema {
	const name = "CountryCode"
	if _, ok := r.Map()[name]; !ok {
		s := &huma.Schema{
			Type: huma.TypeString, MinLength: ptr(2), MaxLength: ptr(2),
			Description: "An ISO 3166-1 alpha-2 country code: the code ISO assigns a country or territory (US, GB, DE, AQ, PR), " +
				"or XK for Kosovo; either case, kept in capitals. Anything else is a 400 naming the field: digits (12), " +
				"codes ISO assigns to no country (ZZ, EU, UN, and the user-assigned AA, QM to QZ and XA to XZ besides XK), " +
				"withdrawn codes (SU, YU, CS, AN, NT) and codes ISO reserves for another's use (UK: use GB).",
			Examples: []any{"US"},
		}
		s.PrecomputeMessages()
		r.Map()[name] = s
	}
	return &huma.Schema{Ref: "#/components/schemas/" + name}
}

// Resolve implements huma.ResolverWithPath: a code that is not a country's
// is refused naming the field, and a code in lower case is kept in
// capitals.
func (c *CountryCode) Resolve(_ huma.Context, prefix *huma.PathBuffer) []error {
	if utf8.RuneCountInString(string(*c)) != 2 {
		return nil // empty, or refused by the schema's length
	}
	code, msg := country(string(*c))
	if msg != "" {
		return []error{&huma.ErrorDetail{Location: prefix.String(), Message: msg, Value: string(*c)}}
	}
	*c = CountryCode(code)
	return nil
}

// country is code in capitals when it is an ISO 3166-1 alpha-2 country
// code (see CountryCode); otherwise msg says why it is not. The regions
// golang.org/x/text knows decide: a country (not a group such as EU or
// 419, not unknown ZZ or private use) under its own code (not one that
// stands for another, as UK for GB), with a UN M.49 number (which the
// codes reserved for other uses, such as AC, EA and UN, lack), and not
// withdrawn.
func country(code string) (upper, msg string) {
	r, err := language.ParseRegion(code)
	if len(code) != 2 || err != nil || !r.IsCountry() || r.M49() == 0 {
		return "", "not an ISO 3166-1 alpha-2 country code"
	}
	upper = r.String()
	if c := r.Canonicalize(); c != r {
		return "", "not an ISO 3166-1 alpha-2 country code: use " + c.String()
	}
	switch upper {
	case "AN", "CS", "NT", "SU", "YU":
		// Withdrawn from ISO 3166-1 (into ISO 3166-3) without a single
		// successor, which golang.org/x/text still counts as countries
		// (its data keeps them for old locales): the Netherlands
		// Antilles, Serbia and Montenegro, the Neutral Zone, the Soviet
		// Union and Yugoslavia.
		return "", "a withdrawn ISO 3166-1 code: give the country's current code"
	}
	return upper, ""
}
