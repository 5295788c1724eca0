// Package contactcsv reads and writes contacts as CSV, in the one layout the
// contacts export writes and distribution-list imports read: a header row,
// then one contact per row. It neutralises spreadsheet formulas on the way
// out and restores the neutralised values on the way in.
package contactcsv

import (
	"strings"
)

// Columns of the layout, in the order the export writes them.
const (
	ColID           = "id"
	ColExternalID   = "externalId"
	ColFirstName    = "firstName"
	ColMiddleName   = "middleName"
	ColLastName     = "lastName"
	ColLanguage     = "language"
	ColTimeZone     = "timeZone"
	ColEmails       = "emails"
	ColMobilePhones = "mobilePhones"
	ColHomePhones   = "homePhones"
	ColWorkPhones   = "workPhones"
	ColOtherPhones  = "otherPhones"
	ColFaxPhones    = "faxPhones"
	ColRoles        = "roles"
	ColChatUsers    = "chatUsers"
	// CustomPrefix starts the name of a custom-field column: custom.building
	// holds the custom field "building".
	CustomPrefix = "custom."
)

// Columns lists the fixed columns in export order; custom-field columns follow them.
var Columns = []string{
	ColID, ColExternalID, ColFirstName, ColMiddleName, ColLastName, ColLanguage, ColTimeZone,
	ColEmails, ColMobilePhones, ColHomePhones, ColWorkPhones, ColOtherPhones, ColFaxPhones, ColRoles, ColChatUsers,
}

// RequiredColumns must be in the header of an imported file.
var RequiredColumns = []string{ColFirstName, ColLastName}

// aliases maps lower-case header names people write by hand to columns.
var aliases = map[string]string{
	"email": ColEmails, "emailaddress": ColEmails,
	"phone": ColMobilePhones, "phones": ColMobilePhones, "mobile": ColMobilePhones, "mobilephone": ColMobilePhones,
	"homephone": ColHomePhones, "workphone": ColWorkPhones, "otherphone": ColOtherPhones,
	"fax": ColFaxPhones, "faxphone": ColFaxPhones,
	"role": ColRoles, "chatuser": ColChatUsers, "externalid": ColExternalID, "external_id": ColExternalID,
	"firstname": ColFirstName, "first_name": ColFirstName, "middlename": ColMiddleName, "lastname": ColLastName,
	"last_name": ColLastName, "timezone": ColTimeZone, "time_zone": ColTimeZone,
}

func init() {
	for _, c := range Columns {
		aliases[strings.ToLower(c)] = c
	}
}

// PhoneTypeOfColumn is the phone type (model.PhoneType) each phone column holds.
var PhoneTypeOfColumn = map[string]string{
	ColMobilePhones: "Mobile", ColHomePhones: "Home", ColWorkPhones: "Work", ColOtherPhones: "Other", ColFaxPhones: "Fax",
}

// columnOfPhoneType is the column a phone of each type is written in; a
// type it does not list goes to otherPhones.
var columnOfPhoneType = map[string]string{
	"Mobile": ColMobilePhones, "Home": ColHomePhones, "Work": ColWorkPhones, "Other": ColOtherPhones, "Fax": ColFaxPhones,
}

// Phone flags. An item of a phone column may end in the flags of its
// number in brackets, the ones that are on: "+15551234567 [text]",
// "[call]", "[text call]" or "[none]". An item without them has its
// column's default flags (DefaultFlags), and the export writes them only
// where a number's flags differ from those. A fax number takes neither.
const (
	FlagText = "text"
	FlagCall = "call"
	FlagNone = "none"
)

// DefaultFlags are the flags of a number of a phone column written
// without flags: a mobile number takes texts and calls, a home, work or
// other number calls only, a fax number neither.
func DefaultFlags(column string) (canText, canCall bool) {
	switch column {
	case ColMobilePhones:
		return true, true
	case ColFaxPhones:
		return false, false
	}
	return false, true
}

// phoneItem is the item of a phone column for a number with flags.
func phoneItem(column, number string, canText, canCall bool) string {
	if t, c := DefaultFlags(column); t == canText && c == canCall {
		return number
	}
	switch {
	case canText && canCall:
		return number + " [" + FlagText + " " + FlagCall + "]"
	case canText:
		return number + " [" + FlagText + "]"
	case canCall:
		return number + " [" + FlagCall + "]"
	}
	return number + " [" + FlagNone + "]"
}

// cutFlags splits an item of a phone column into its number and flags; ok
// is false when its brackets hold something else than flags.
func cutFlags(column, item string) (number string, canText, canCall, ok bool) {
	canText, canCall = DefaultFlags(column)
	number, flags, found := strings.Cut(item, "[")
	if !found {
		return item, canText, canCall, true
	}
	flags, rest, closed := strings.Cut(flags, "]")
	if !closed || strings.TrimSpace(rest) != "" {
		return "", false, false, false
	}
	words := strings.Fields(strings.ToLower(flags))
	if len(words) == 0 {
		return "", false, false, false
	}
	canText, canCall = false, false
	for _, w := range words {
		switch {
		case w == FlagText && !canText:
			canText = true
		case w == FlagCall && !canCall:
			canCall = true
		case w == FlagNone && len(words) == 1:
		default:
			return "", false, false, false
		}
	}
	return strings.TrimSpace(number), canText, canCall, true
}

// ListSeparator separates the items of list cells (emails, phones, roles, chat users).
const ListSeparator = ";"

// Limits of one row. Values beyond them are row problems.
const (
	MaxNameLength       = 100
	MaxExternalIDLength = 200
	MaxEmailLength      = 254
	MaxListItems        = 20
	MaxRoleLength       = 100
	MaxChatUserIDLength = 200
	MaxCustomKeyLength  = 64
	MaxCustomValue      = 1000
)

// Limits of custom fields. A contact holds at most MaxCustomFields of
// them, so a row gives at most that many (non-empty cells); an import
// that merges new keys into a contact's refuses the row past it. A
// tenant's contacts together hold at most MaxCustomColumns different keys,
// which the import enforces as it writes them: the export writes a column
// for each, and a file may have as many custom-field columns, so every
// exported file imports again.
const (
	MaxCustomFields  = 200
	MaxCustomColumns = 1000
)

// ChatPlatforms are the team-chat platforms a chat user may be on.
var ChatPlatforms = []string{"slack", "teams", "googlechat", "webex", "mattermost", "other"}

// formulaStarts are the first characters that make a spreadsheet treat a cell
// as a formula (OWASP's list: = + - @ tab carriage return).
const formulaStarts = "=+-@\t\r"

// needsQuote reports whether a cell would be read as a formula, also after a
// leading quote is stripped once: leading quotes are skipped before looking.
func needsQuote(v string) bool {
	v = strings.TrimLeft(v, "'")
	return v != "" && strings.IndexByte(formulaStarts, v[0]) >= 0
}

// Neutralize prefixes a single quote to a value a spreadsheet would evaluate
// as a formula (one starting with =, +, -, @, tab or carriage return). Values
// that already start with quotes followed by such a character get one more
// quote, so Restore gives back exactly the original value.
func Neutralize(v string) string {
	if needsQuote(v) {
		return "'" + v
	}
	return v
}

// Restore undoes Neutralize: a value starting with a single quote followed
// (after any further quotes) by =, +, -, @, tab or carriage return loses its
// first quote. "'+15551234567" becomes "+15551234567"; "+15551234567"
// written by hand stays as it is.
func Restore(v string) string {
	if len(v) > 1 && v[0] == '\'' && needsQuote(v[1:]) {
		return v[1:]
	}
	return v
}
