package fileservice

import "testing"

func TestCheckPath(t *testing.T) {
	t.Parallel()
	good := []string{"logo.png", "sirens/tornado.wav", "a b/c-d_e (1).mp3", "ünïcode/名前.png", "..hidden", "x..y",
		"می\u200cخواهم.png", "👩\u200d💻/❤\ufe0f.png"}
	bad := []string{"", "/etc/passwd", "../x.png", "a/../b.png", "a/./b", "a//b", "a/", ".", "..", "a\\b.png",
		"bell\a.png", "new\nline.png", "rtl\u202egnp.exe", "nul\x00.png", " lead.png", "trail.png ", "\xff.png",
		"line\u2028sep.png", "para\u2029sep.png", "\u3164.png", "a\u115Fb.png", "a\u1160b.png", "a\uFFA0b.png", "a\u2800b.png",
		"zw\u200Bsp.png", "zw\u200Dj.png", "vs\uFE0F.png", "c1\u0085.png", "tag\U000E0041.png",
		string(make([]byte, 256)) + ".png"}
	for _, p := range good {
		if err := CheckPath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
	for _, p := range bad {
		if err := CheckPath(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
	if f, n := SplitName("a/b/c.png"); f != "a/b" || n != "c.png" {
		t.Errorf("split %q %q", f, n)
	}
	if f, n := SplitName("c.png"); f != "" || n != "c.png" {
		t.Errorf("split %q %q", f, n)
	}
}
