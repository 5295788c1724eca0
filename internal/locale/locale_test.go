package locale

import (
	"archive/zip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTimeZone(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Europe/London": "Europe/London", "America/Argentina/ComodRivadavia": "America/Argentina/ComodRivadavia",
		"UTC": "UTC", "US/Eastern": "US/Eastern", "Asia/Calcutta": "Asia/Calcutta", "Etc/GMT+5": "Etc/GMT+5",
		"GB": "GB", "us/eastern": "US/Eastern", "america/new_york": "America/New_York", " UTC ": "UTC",
		"": "", "Local": "", "localtime": "", "Factory": "", "Mars/Olympus_Mons": "", "../etc/passwd": "",
		"/etc/localtime": "", "posix/Europe/Berlin": "", "right/UTC": "", "zone.tab": "", "Europe/Berlin\x00": "",
		strings.Repeat("A", 65): "",
	} {
		got, err := TimeZone(in)
		if got != want || (want == "") != errors.Is(err, ErrTimeZone) {
			t.Errorf("TimeZone(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestZoneNames: every name loads, none differs from another in case only,
// and the list is the toolchain's (go generate ./internal/locale after a
// Go upgrade brings new names).
func TestZoneNames(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var names []string
	for _, z := range zones {
		if _, err := time.LoadLocation(z.name); err != nil {
			t.Errorf("%s: %v", z.name, err)
		}
		if f := strings.ToLower(z.name); seen[f] {
			t.Errorf("%s differs from another name in case only", z.name)
		} else {
			seen[f] = true
		}
		names = append(names, z.name)
	}
	if !slices.IsSorted(names) {
		t.Error("the names are not sorted")
	}
	for _, z := range CanonicalZones() {
		if got, err := TimeZone(z); got != z || err != nil {
			t.Errorf("canonical zone %s: %q, %v", z, got, err)
		}
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "time", "zoneinfo.zip")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no %s", path)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var toolchain []string
	for _, f := range zr.File {
		toolchain = append(toolchain, f.Name)
	}
	slices.Sort(toolchain)
	if !slices.Equal(names, toolchain) {
		t.Errorf("zones.go holds %d names, the toolchain's data %d: run go generate ./internal/locale", len(names), len(toolchain))
	}
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"en": "en", "EN": "en", "en-us": "en-US", "en_US": "en-US", "zh-hant": "zh-Hant", "zh-Hant-TW": "zh-Hant-TW",
		"pt-BR": "pt-BR", "es-419": "es-419", "tl": "tl", "fil": "fil", "iw": "he", "in": "id", "en-Latn-US": "en-US",
		"sr-Latn": "sr-Latn", "de-DE-1996": "de-DE-1996", "tlh": "tlh", "en-x-foo": "en-x-foo", " fr ": "fr",
		"": "", "xx": "", "und": "", "x-foo": "", "klingon": "", "en--US": "", "en-US-": "", "123": "", "en-US\x00": "",
		"en-" + strings.Repeat("abcdefgh-", 4): "",
	} {
		got, err := Language(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("Language(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
