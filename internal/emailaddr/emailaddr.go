// Package emailaddr is the one rule for the email addresses clients give
// tocsin, for a directory user and an ad-hoc recipient of an alert alike:
// an RFC 5322 addr-spec, written alone, kept in one spelling so that two
// spellings of one mailbox are one address.
package emailaddr

import (
	"errors"
	"net/mail"
	"strings"
)

// MaxLength is the longest address taken, in bytes of its spelling.
const MaxLength = 254

// Normalize checks that s, spaces around it aside, is an RFC 5322
// addr-spec (local@domain) without a display name, comment or angle
// brackets, and returns its one spelling: in lower case, with the local
// part quoted exactly when it must be. So "Ada"@Example.com is
// ada@example.com, while "a b"@example.com keeps its quotes: without them
// it would be no address, or another one ("a@b"@example.com is not
// a@b@example.com).
func Normalize(s string) (string, error) {
	s = strings.TrimSpace(s)
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", errors.New("not an RFC 5322 email address")
	}
	if a.Name != "" || strings.ContainsAny(s, "<>,") {
		return "", errors.New("give the address alone, without a display name, comment or angle brackets")
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at < 1 || at == len(a.Address)-1 {
		return "", errors.New("not an RFC 5322 email address")
	}
	// mail.Address writes the local part quoted when it must be, as
	// <local@domain> when it has no name.
	spelled := (&mail.Address{Address: a.Address}).String()
	spelled = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(spelled, "<"), ">"))
	if len(spelled) > MaxLength {
		return "", errors.New("longer than 254 characters")
	}
	return spelled, nil
}
