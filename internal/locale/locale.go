// Package locale holds the one rule for a person's time zone and preferred
// language. Every way of writing them (the directory's usersCreate and
// usersUpdate, the contacts CSV import) takes a value through TimeZone and
// Language, so what one refuses every one refuses, and all store the same
// form of what they take.
package locale

import (
	"errors"
	"fmt"
	"strings"
	_ "time/tzdata" // the names below are those of the data built into the binary

	"golang.org/x/text/language"
)

//go:generate sh -c "go run gen_zones.go $(go env GOROOT)/lib/time/zoneinfo.zip /usr/share/zoneinfo/zone.tab"

// Bounds of the values read: the longest name of the time zone database
// has 32 bytes, and RFC 5646 asks that language tags of up to 35
// characters be kept.
const (
	MaxTimeZoneLength = 64
	MaxLanguageLength = 35
)

// zoneByFold maps each name of the database, in lower case, to its
// spelling there. No two names differ in case only (a test checks it).
var zoneByFold = func() map[string]string {
	m := make(map[string]string, len(zones))
	for _, z := range zones {
		if z.name != "Factory" { // the database's placeholder for a zone not yet set
			m[strings.ToLower(z.name)] = z.name
		}
	}
	return m
}()

// CanonicalZones returns the canonical zones of the database, sorted: one
// per region (zone.tab) and UTC. TimeZone takes these and the links to
// them.
func CanonicalZones() []string {
	var out []string
	for _, z := range zones {
		if z.listed {
			out = append(out, z.name)
		}
	}
	return out
}

// ErrTimeZone says a value names no time zone; the message tells what to give.
var ErrTimeZone = errors.New("not a time zone of the IANA time zone database: give a name such as Europe/Berlin or America/New_York (Local and localtime, the server's own zone, name none)")

// TimeZone returns the time zone v names, spelled as the IANA time zone
// database built into tocsin spells it. It takes every name of the
// database: its zones (America/New_York, Etc/GMT+5) and the links to them
// (US/Eastern, Asia/Calcutta, UTC), in any case ("us/eastern" is
// "US/Eastern"), with spaces around it left out. A link is kept as the
// link, not replaced by its zone: it is the name that was given, and the
// data built into Go does not say which names are links. Local and
// localtime, which time.LoadLocation takes for whatever zone the server
// runs in, name no zone of the database and are refused, and so is its
// placeholder Factory. The names do not depend on the host's zoneinfo
// files. The error is ErrTimeZone.
func TimeZone(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) > MaxTimeZoneLength {
		return "", ErrTimeZone
	}
	name, ok := zoneByFold[strings.ToLower(v)]
	if !ok {
		return "", ErrTimeZone
	}
	return name, nil
}

// Language returns the language tag v in the canonical form of BCP 47
// (RFC 5646, golang.org/x/text/language's BCP47 canonicalization): its
// subtags in their conventional case (en-us is en-US, zh-hant is zh-Hant),
// deprecated subtags replaced by their preferred values (iw is he, in is
// id), a script that goes without saying left out (en-Latn-US is en-US);
// an underscore is read as a hyphen (en_US). A tag must be well formed and
// its subtags registered, and it must name a language: und and a
// private-use tag alone (x-foo) name none. Spaces around it are left out.
func Language(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errors.New("must not be empty")
	}
	if len(v) > MaxLanguageLength {
		return "", fmt.Errorf("longer than %d characters: not a BCP 47 language tag such as en, pt-BR or zh-Hant", MaxLanguageLength)
	}
	tag, err := language.BCP47.Parse(v)
	if err != nil {
		return "", errors.New("not a BCP 47 language tag with registered subtags, such as en, pt-BR or zh-Hant")
	}
	if _, conf := tag.Base(); conf != language.Exact { // und, und-US, x-foo: the language is at best guessed
		return "", errors.New("names no language: give a BCP 47 language tag such as en, pt-BR or zh-Hant")
	}
	s := tag.String()
	if len(s) > MaxLanguageLength {
		return "", fmt.Errorf("its canonical form %s is longer than %d characters", s, MaxLanguageLength)
	}
	return s, nil
}
