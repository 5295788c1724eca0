package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestTemporalDynamicConfigAgrees checks that docker-compose's Temporal and
// the development server of stack.sh get the same task queue priority and
// fairness settings, and that compose mounts the file it names.
func TestTemporalDynamicConfigAgrees(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "temporal", "dynamicconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file map[string][]struct {
		Value any `yaml:"value"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatalf("dynamicconfig.yaml: %v", err)
	}
	var want []string
	for k, v := range file {
		if len(v) != 1 {
			t.Fatalf("%s: want one value, got %d", k, len(v))
		}
		want = append(want, fmt.Sprintf("%s=%v", k, v[0].Value))
	}
	for _, k := range []string{"matching.useNewMatcher=true", "matching.enableFairness=true"} {
		if !slices.Contains(want, k) {
			t.Errorf("dynamicconfig.yaml lacks %s", k)
		}
	}

	sh, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "local", "stack.sh"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)temporal_dynamic_config=\((.*?)\)`).FindSubmatch(sh)
	if block == nil {
		t.Fatal("stack.sh: no temporal_dynamic_config")
	}
	var got []string
	for _, m := range regexp.MustCompile(`--dynamic-config-value (\S+)`).FindAllSubmatch(block[1], -1) {
		got = append(got, string(m[1]))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("stack.sh passes %v, dynamicconfig.yaml sets %v", got, want)
	}
	if n := len(regexp.MustCompile(`"\$\{temporal_dynamic_config\[@\]\}"`).FindAll(sh, -1)); n != 2 {
		t.Errorf("stack.sh uses the dynamic config in %d profiles, want both", n)
	}

	p := loadCompose(t)
	tmp, ok := p.Services["temporal"]
	if !ok {
		t.Fatal("no temporal service")
	}
	path := tmp.Environment["DYNAMIC_CONFIG_FILE_PATH"]
	if path == nil {
		t.Fatal("temporal: DYNAMIC_CONFIG_FILE_PATH not set")
	}
	mounted := false
	for _, v := range tmp.Volumes {
		if filepath.Join("/etc/temporal", *path) == v.Target && filepath.Base(v.Source) == "dynamicconfig.yaml" {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("temporal: %s is not the mounted deploy/temporal/dynamicconfig.yaml", *path)
	}
}
