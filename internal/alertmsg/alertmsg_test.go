package alertmsg

import (
	"strings"
	"testing"
)

func TestCompileAndRender(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		vars     []string
		bad      bool
	}{
		{in: "Hello {{firstName}}!", want: "Hello Ada!", vars: []string{"firstName"}},
		{in: "{{ firstName }} {{lastName}} / {{firstName}}", want: "Ada Lovelace / Ada", vars: []string{"firstName", "lastName"}},
		{in: "no variables", want: "no variables"},
		{in: "custom {{custom.building}}", want: "custom B12", vars: []string{"custom.building"}},
		{in: "broken {{firstName", bad: true},
		{in: "empty {{}}", bad: true},
		{in: "space {{first name}}", bad: true},
		{in: "digit {{1x}}", bad: true},
	}
	vals := map[string]string{"firstName": "Ada", "lastName": "Lovelace", "custom.building": "B12"}
	for _, c := range cases {
		tpl, err := Compile(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: want an error", c.in)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if got := tpl.Render(func(n string) string { return vals[n] }); got != c.want {
			t.Errorf("%q rendered %q, want %q", c.in, got, c.want)
		}
		if got := strings.Join(tpl.Variables(), ","); got != strings.Join(c.vars, ",") {
			t.Errorf("%q variables %q, want %v", c.in, got, c.vars)
		}
	}
}

func TestRenderHTMLEscapes(t *testing.T) {
	t.Parallel()
	tpl, _ := Compile("<p>{{firstName}}</p>")
	if got := tpl.RenderHTML(func(string) string { return "<b>x</b>" }); got != "<p>&lt;b&gt;x&lt;/b&gt;</p>" {
		t.Fatal(got)
	}
}

func TestSMSInfo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text     string
		enc      string
		units    int
		segments int
	}{
		{"", GSM7, 0, 1},
		{"hello", GSM7, 5, 1},
		{strings.Repeat("a", 160), GSM7, 160, 1},
		{strings.Repeat("a", 161), GSM7, 161, 2},
		{strings.Repeat("a", 306), GSM7, 306, 2},
		{strings.Repeat("a", 307), GSM7, 307, 3},
		{"price 5€", GSM7, 9, 1}, // € takes two septets
		{strings.Repeat("€", 80), GSM7, 160, 1},
		{strings.Repeat("€", 81), GSM7, 162, 2},
		{"héllo", GSM7, 5, 1}, // é is in the basic set
		{"ça va", UCS2, 5, 1}, // ç (lower case) is not in the basic set
		{"Привет", UCS2, 6, 1},
		{strings.Repeat("ж", 70), UCS2, 70, 1},
		{strings.Repeat("ж", 71), UCS2, 71, 2},
		{"fire 🔥", UCS2, 7, 1}, // an emoji is two UTF-16 units
	}
	for _, c := range cases {
		enc, units, seg := SMSInfo(c.text)
		if enc != c.enc || units != c.units || seg != c.segments {
			t.Errorf("%q: got %s %d %d, want %s %d %d", c.text, enc, units, seg, c.enc, c.units, c.segments)
		}
	}
}

func TestResponseToken(t *testing.T) {
	t.Parallel()
	key := LinkSecret("k", "")
	tok := ResponseToken(key, "1001", 42, 7)
	tenant, alert, seq, err := ParseResponseToken(key, tok)
	if err != nil || tenant != "1001" || alert != 42 || seq != 7 {
		t.Fatalf("%s %d %d %v", tenant, alert, seq, err)
	}
	if _, _, _, err := ParseResponseToken(LinkSecret("other", ""), tok); err == nil {
		t.Fatal("a token signed with another key was accepted")
	}
	forged := ResponseToken(key, "1001", 42, 8)
	enc, _, _ := strings.Cut(forged, ".")
	_, sig, _ := strings.Cut(tok, ".")
	if _, _, _, err := ParseResponseToken(key, enc+"."+sig); err == nil {
		t.Fatal("a token with another recipient's signature was accepted")
	}
	for _, bad := range []string{"", ".", "abc", "a.b", tok + "x"} {
		if _, _, _, err := ParseResponseToken(key, bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

// TestResponseTokenHasOneSpelling: other base64 spellings of a valid token
// (non-zero trailing bits, line breaks, padding) are refused.
func TestResponseTokenHasOneSpelling(t *testing.T) {
	key := LinkSecret("k", "")
	tok := ResponseToken(key, "1001", 42, 7)
	enc, sig, _ := strings.Cut(tok, ".")
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	// The last character of an unpadded encoding carries unused low bits;
	// flipping them decodes to the same bytes under lax decoding.
	last := strings.IndexByte(alphabet, sig[len(sig)-1])
	var variants []string
	for bit := 0; bit < 4; bit++ {
		if v := last ^ (1 << bit); v < len(alphabet) {
			variants = append(variants, enc+"."+sig[:len(sig)-1]+string(alphabet[v]))
		}
	}
	variants = append(variants, enc+".\n"+sig, enc[:2]+"\r\n"+enc[2:]+"."+sig, tok+"=", enc+"=."+sig)
	for _, v := range variants {
		if _, _, _, err := ParseResponseToken(key, v); err == nil {
			t.Errorf("non-canonical spelling %q accepted", v)
		}
	}
	if _, _, _, err := ParseResponseToken(key, tok); err != nil {
		t.Fatal(err)
	}
}
