// Package alertmsg renders alert messages for recipients: {{variable}}
// templates filled per recipient, and the SMS encoding and segment count of
// a text.
package alertmsg

import (
	"fmt"
	"html"
	"strings"
)

// Builtin lists the variables every message may use besides its custom ones.
var Builtin = []string{
	"firstName", "lastName", "fullName", "email", "phone", "externalId",
	"alertId", "subject", "senderName", "incidentName", "locationName",
	"responseLink", "conference", "link",
}

// Template is a message compiled into literal text and variables.
type Template struct {
	parts []part
}

type part struct {
	text     string
	variable bool
}

// Compile parses text with {{name}} variables (spaces inside the braces are
// allowed). An unclosed "{{" is an error; so is an empty or malformed name.
func Compile(text string) (*Template, error) {
	t := &Template{}
	rest := text
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if rest != "" {
				t.parts = append(t.parts, part{text: rest})
			}
			return t, nil
		}
		if i > 0 {
			t.parts = append(t.parts, part{text: rest[:i]})
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("unclosed {{ at character %d", len(text)-len(rest)+i)
		}
		name := strings.TrimSpace(rest[i+2 : i+2+j])
		if !validName(name) {
			return nil, fmt.Errorf("bad variable name %q", name)
		}
		t.parts = append(t.parts, part{text: name, variable: true})
		rest = rest[i+2+j+2:]
	}
}

func validName(s string) bool {
	if s == "" || len(s) > 50 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case (r >= '0' && r <= '9') || r == '_' || r == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Variables returns the names the template uses, each once, in order.
func (t *Template) Variables() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.variable && !seen[p.text] {
			seen[p.text] = true
			out = append(out, p.text)
		}
	}
	return out
}

// Uses reports whether the template uses the variable name.
func (t *Template) Uses(name string) bool {
	for _, p := range t.parts {
		if p.variable && p.text == name {
			return true
		}
	}
	return false
}

// Render fills the variables with lookup.
func (t *Template) Render(lookup func(name string) string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.variable {
			b.WriteString(lookup(p.text))
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// RenderHTML fills the variables with HTML-escaped values.
func (t *Template) RenderHTML(lookup func(name string) string) string {
	return t.Render(func(name string) string { return html.EscapeString(lookup(name)) })
}
