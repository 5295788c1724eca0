package names

import (
	"strings"
	"testing"
)

func TestCheckTakesTheNamesOfEveryScript(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Night shift":          "Night shift",
		"Caf\u00e9":            "Caf\u00e9",
		"Cafe\u0301":           "Caf\u00e9", // NFC
		"\u00c5ngstr\u00f6m":   "\u00c5ngstr\u00f6m",
		"A\u030angstro\u0308m": "\u00c5ngstr\u00f6m",
		"名前":                   "名前",
		"Ελληνικά":             "Ελληνικά",
		"עברית":                "עברית",
		"می\u200cخواهم":        "می\u200cخواهم", // Persian ZWNJ
		"क्\u200dष":            "क्\u200dष",     // Devanagari ZWJ after a virama
		"क्\u200cष":            "क्\u200cष",     // ZWNJ after a virama
		"ক্\u200dষ":            "ক্\u200dষ",     // Bengali
		"ർ\u200d":              "",              // a joiner at the end
		"👩\u200d💻 on call":     "👩\u200d💻 on call",
		"🏳\ufe0f\u200d🌈":       "🏳\ufe0f\u200d🌈",
		"👨🏽\u200d💻":            "👨🏽\u200d💻",
		"❤\ufe0f team":         "❤\ufe0f team",
		"#\ufe0f\u20e3 one":    "#\ufe0f\u20e3 one",
		"辻\U000e0100":          "辻\U000e0100", // an ideographic variation sequence
		"ᠮᠣᠩᠭᠣᠯ\u180b":         "ᠮᠣᠩᠭᠣᠯ\u180b",
		"🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f": "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
	} {
		got, err := Check(in)
		if want == "" {
			if err == nil {
				t.Errorf("%q taken as %q", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("Check(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCheckRefusesWhatCanHideWhatANameSays(t *testing.T) {
	t.Parallel()
	for in, why := range map[string]string{
		"bell\a":                          "control",
		"new\nline":                       "control",
		"tab\there":                       "control",
		"c1\u0085":                        "control",
		"del\u007f":                       "control",
		"\u202eevil":                      "bidirectional",
		"a\u202ab":                        "bidirectional",
		"a\u202db":                        "bidirectional",
		"a\u2066b\u2069":                  "bidirectional",
		"a\u2067b":                        "bidirectional",
		"a\u2068b":                        "bidirectional",
		"a\u200eb":                        "bidirectional",
		"a\u200fb":                        "bidirectional",
		"a\u061cb":                        "bidirectional",
		"line\u2028sep":                   "separator",
		"para\u2029sep":                   "separator",
		"zw\u200bsp":                      "invisible",
		"soft\u00adhyphen":                "invisible",
		"word\u2060joiner":                "invisible",
		"bom\ufeff":                       "invisible",
		"\u3164":                          "invisible",
		"a\u115fb":                        "invisible",
		"a\u2800b":                        "invisible",
		"cgj\u034f":                       "invisible",
		"St\u200daff":                     "joiner", // between Latin letters it only hides a difference
		"St\u200caff":                     "joiner",
		"\u200dStaff":                     "joiner",
		"Staff\u200c":                     "joiner",
		"a \u200d b":                      "joiner",
		"👩\u200d\u200d💻":                  "joiner",
		"vs\ufe0f":                        "variation selector",
		"\ufe0fstart":                     "variation selector",
		"a\U000e0100":                     "variation selector",
		"1\ufe0f":                         "variation selector", // no keycap follows
		"tag\U000e0041":                   "tag",
		"🏴\U000e0067\U000e0062":           "tag", // no cancel tag ends it
		"🏴\U000e007f":                     "tag",
		"bad \ufffd":                      "replacement",
		"🏴\U000e0067\U000e007f\U000e007f": "tag",
	} {
		got, err := Check(in)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("Check(%q) = %q, %v; want an error about a %s", in, got, err, why)
		}
	}
	if _, err := Check("bad\xff"); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func TestNormalIsNFC(t *testing.T) {
	t.Parallel()
	if got := Normal("Cafe\u0301"); got != "Caf\u00e9" {
		t.Errorf("%q", got)
	}
	if got := Normal("\u202eevil"); got != "\u202eevil" {
		t.Errorf("Normal refuses nothing: %q", got)
	}
}
