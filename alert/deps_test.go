package alert

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// deps lists the packages patterns depend on, themselves included.
func deps(t *testing.T, patterns ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goBin, append([]string{"list", "-deps"}, patterns...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	return strings.Fields(string(out))
}

// TestNothingBelowTheAPIImportsIt: the packages below the API (workflows,
// activities, storage, channels) depend neither on an api package nor on
// huma, the API's schema library; they share the alert's domain types
// instead.
func TestNothingBelowTheAPIImportsIt(t *testing.T) {
	const mod = "github.com/tocsin/tocsin/"
	for _, p := range deps(t, mod+"workflows", mod+"activities", mod+"storage/...", mod+"channels/...") {
		if p == mod+"api" || strings.HasPrefix(p, mod+"api/") || strings.HasPrefix(p, "github.com/danielgtaylor/huma") {
			t.Errorf("a package below the API depends on %s", p)
		}
	}
}

// TestAlertStandsAlone: the domain package depends on no api package, no
// huma, no Temporal and no storage.
func TestAlertStandsAlone(t *testing.T) {
	const mod = "github.com/tocsin/tocsin/"
	for _, p := range deps(t, mod+"alert") {
		if p == mod+"api" || strings.HasPrefix(p, mod+"api/") || strings.HasPrefix(p, "github.com/danielgtaylor/huma") ||
			strings.HasPrefix(p, "go.temporal.io/") || p == mod+"storage" || strings.HasPrefix(p, mod+"storage/") {
			t.Errorf("alert depends on %s", p)
		}
	}
}
