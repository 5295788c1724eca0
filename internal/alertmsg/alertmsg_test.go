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
	for _, tag := range []string{"k3x7q2ab", ""} {
		tok := ResponseToken(key, "1001", 42, 7, tag)
		got, err := ParseResponseToken(key, tok)
		if err != nil || got != (ResponseTarget{Tenant: "1001", AlertID: 42, Seq: 7, Tag: tag}) {
			t.Fatalf("tag %q: %+v %v", tag, got, err)
		}
		if _, err := ParseResponseToken(LinkSecret("other", ""), tok); err == nil {
			t.Fatal("a token signed with another key was accepted")
		}
		forged := ResponseToken(key, "1001", 42, 8, tag)
		enc, _, _ := strings.Cut(forged, ".")
		_, sig, _ := strings.Cut(tok, ".")
		if _, err := ParseResponseToken(key, enc+"."+sig); err == nil {
			t.Fatal("a token with another recipient's signature was accepted")
		}
		for _, bad := range []string{"", ".", "abc", "a.b", tok + "x"} {
			if _, err := ParseResponseToken(key, bad); err == nil {
				t.Fatalf("%q accepted", bad)
			}
		}
	}
}

// TestResponseTokenBindsTheTag: the link of one alert does not carry
// another alert's tag (an alert of the same id before a restore), with the
// tag or without one.
func TestResponseTokenBindsTheTag(t *testing.T) {
	t.Parallel()
	key := LinkSecret("k", "")
	tok := ResponseToken(key, "1001", 42, 7, "k3x7q2ab")
	for _, other := range []string{ResponseToken(key, "1001", 42, 7, "zzzzzzzz"), ResponseToken(key, "1001", 42, 7, "")} {
		if other == tok {
			t.Fatalf("%q is the token of another tag", other)
		}
		// The other alert's payload under this alert's signature.
		enc, _, _ := strings.Cut(other, ".")
		_, sig, _ := strings.Cut(tok, ".")
		if _, err := ParseResponseToken(key, enc+"."+sig); err == nil {
			t.Fatal("a token with another alert's signature was accepted")
		}
	}
	// A payload with an empty tag is not another spelling of one without.
	payload := "1001.16.7."
	empty := b64.EncodeToString([]byte(payload)) + "." + b64.EncodeToString(sign(key, payload))
	if _, err := ParseResponseToken(key, empty); err == nil {
		t.Fatal("a token with an empty tag was accepted")
	}
}

// TestResponseTokenHasOneSpelling: other base64 spellings of a valid token
// (non-zero trailing bits, line breaks, padding) are refused.
func TestResponseTokenHasOneSpelling(t *testing.T) {
	key := LinkSecret("k", "")
	tok := ResponseToken(key, "1001", 42, 7, "k3x7q2ab")
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
		if _, err := ParseResponseToken(key, v); err == nil {
			t.Errorf("non-canonical spelling %q accepted", v)
		}
	}
	if _, err := ParseResponseToken(key, tok); err != nil {
		t.Fatal(err)
	}
}

// TestFitSMS: a text over its segment limit is cut to fit, at a whole
// character, ending in "..." before the tail, which stays whole.
func TestFitSMS(t *testing.T) {
	t.Parallel()
	a, zh := strings.Repeat, "ж"
	link := "\n\nPlease confirm: https://t.example/s/ABCDEFGH" // 46 septets
	cases := []struct {
		name, body, tail, keep string
		max                    int
		want                   string
	}{
		{name: "exact limit untouched", body: a("a", 160-46), tail: link, max: 1, want: a("a", 160-46) + link},
		{name: "exact limit of three untouched", body: a("a", 3*153), max: 3, want: a("a", 3*153)},
		{name: "no limit", body: a("a", 2000), max: 0, want: a("a", 2000)},
		{name: "GSM-7 one over", body: a("a", 160-45), tail: link, max: 1, want: a("a", 160-46-3) + "..." + link},
		{name: "GSM-7 across segments", body: a("b", 400), tail: link, max: 2, want: a("b", 306-46-3) + "..." + link},
		{name: "UCS-2", body: a(zh, 80), max: 1, want: a(zh, 67) + "..."},
		{name: "UCS-2 with the link", body: a(zh, 200), tail: link, max: 2, want: a(zh, 134-46-3) + "..." + link},
		// 66 units then an emoji of two: a third unit does not fit.
		{name: "emoji at the cut", body: a(zh, 66) + "🔥🔥🔥", max: 1, want: a(zh, 66) + "..."},
		{name: "emoji inside", body: a(zh, 65) + "🔥" + a(zh, 10), max: 1, want: a(zh, 65) + "🔥" + "..."},
		// 156 septets then a two-septet character: one septet is left.
		{name: "euro at the cut", body: a("a", 156) + "€bbbb", max: 1, want: a("a", 156) + "..."},
		{name: "brace at the cut", body: a("a", 156) + "{bbbb", max: 1, want: a("a", 156) + "..."},
		{name: "brace before the cut", body: a("a", 155) + "{bbbb", max: 1, want: a("a", 155) + "{" + "..."},
		// GSM-7 keeps more of a body whose UCS-2 characters come late.
		{name: "cut before the UCS-2 character", body: a("a", 300) + zh, max: 2, want: a("a", 300) + "..."},
		{name: "UCS-2 keeps more", body: a("a", 100) + a(zh, 200), max: 2, want: a("a", 100) + a(zh, 31) + "..."},
		{name: "trailing spaces dropped", body: a("a", 150) + "       bbbbbb", max: 1, want: a("a", 150) + "..."},
		{name: "link in the body kept", body: "Go to " + a("x", 200) + ". Details: https://t/s/K", keep: "https://t/s/K", max: 1,
			want: "Go to " + a("x", 160-6-3-14) + "... https://t/s/K"},
		{name: "link in the body within the cut", body: "https://t/s/K " + a("x", 200), keep: "https://t/s/K", max: 1,
			want: "https://t/s/K " + a("x", 160-14-3) + "..."},
		{name: "no room but the tail", body: a("a", 10), tail: a("t", 159), max: 1, want: a("t", 159)},
	}
	for _, c := range cases {
		got, short := FitSMS(c.body, c.tail, c.max, c.keep)
		if got != c.want || short != (c.want != c.body+c.tail) {
			t.Errorf("%s: got %q (shortened %v), want %q", c.name, got, short, c.want)
			continue
		}
		if enc, _, n := SMSInfo(got); c.max > 0 && n > c.max {
			t.Errorf("%s: %d %s segments, limit %d", c.name, n, enc, c.max)
		}
		if full, _, _ := SMSInfo(c.body + c.tail); full == GSM7 {
			if enc, _, _ := SMSInfo(got); enc != GSM7 {
				t.Errorf("%s: a GSM-7 text became %s", c.name, enc)
			}
		}
	}
}

// TestToGSM7: a character GSM-7 lacks becomes its base letter when it has
// one, else "?", one per character; GSM-7 text is left as it is.
func TestToGSM7(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"Zoë😀 Ŝmith", "Zoe? Smith"},
		{"ça, Ćwikła, Ångström", "ca, Cwik?a, Ångström"}, // ł has no base letter; Å and ö are GSM-7
		{"héllo {€} [x] ~^|\\", "héllo {€} [x] ~^|\\"},
		{"Привет", "??????"},
		{"👍🏽 ok", "?? ok"},         // an emoji and its skin tone are two characters
		{"e\u0308 c\u0327", "e c"}, // combining marks count with their letter
		{"e\u0301", "é"},           // and make GSM-7 letters where they can
		{"Ø ø ß Æ", "Ø ø ß Æ"},
		{"ĳ Œ ﬁ", "? ? ?"}, // no canonical base letter
		{"", ""},
	}
	for _, c := range cases {
		got := ToGSM7(c.in)
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
		if enc, _, _ := SMSInfo(got); enc != GSM7 {
			t.Errorf("%q: %q is %s", c.in, got, enc)
		}
	}
}

// TestCutWords: a text is cut to its limit in characters, at a space in
// the last third of what fits, however many bytes its characters take.
func TestCutWords(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int
		want  string
	}{
		{"  short text ", 90, "short text"},
		{"word word word word word word word", 12, "word word"},
		{"word word word", 9, "word word"},
		{strings.Repeat("é", 11) + " " + strings.Repeat("x", 40), 30, strings.Repeat("é", 11) + " " + strings.Repeat("x", 18)},
		{"Evacúe el área de inmediato ahora", 30, "Evacúe el área de inmediato"},
		{strings.Repeat("x", 40), 10, strings.Repeat("x", 10)},
	} {
		if got := CutWords(c.in, c.limit); got != c.want {
			t.Errorf("CutWords(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}
