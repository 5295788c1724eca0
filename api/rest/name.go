package rest

import (
	"strings"

	"github.com/tocsin/tocsin/internal/names"
)

// Name returns the name given at location.field trimmed and held to the
// rule of names (internal/names: in NFC, without control, bidirectional or
// invisible characters). A blank name is a 400 naming the field that says
// blank, and so is one the rule refuses, saying which character and why.
func Name(location, field, v, blank string) (string, error) {
	name := strings.TrimSpace(v)
	if name == "" {
		return "", Invalid(location, field, blank, v)
	}
	name, err := names.Check(name)
	if err != nil {
		return "", Invalid(location, field, err.Error(), v)
	}
	return name, nil
}
