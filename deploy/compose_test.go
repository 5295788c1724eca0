package deploy

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = ".."

// wantPorts lists, per service, the host:container ports the README documents.
// A service missing here publishes nothing.
var wantPorts = map[string][]string{
	"temporal":    {"7233:7233"},
	"temporal-ui": {"8233:8080"},
	"minio":       {"9000:9000", "9001:9001"},
	"mailpit":     {"1025:1025", "8025:8025"},
	"prometheus":  {"9090:9090"},
	"grafana":     {"3000:3000"},
	"tocsin-api":  {"8080:8080"},
}

var wantServices = []string{
	"postgresql", "temporal", "temporal-ui", "minio", "mailpit",
	"prometheus", "grafana", "tocsin-api", "tocsin-worker",
}

// loadCompose loads docker-compose.yml the way `docker compose` does,
// validating it against the Compose specification, with an empty environment
// so that every ${VAR:-default} takes its default.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root),
		cli.WithEnv([]string{}),
	)
	if err != nil {
		t.Fatalf("compose options: %v", err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return p
}

func TestComposeServices(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	got := slices.Sorted(func(yield func(string) bool) {
		for name := range p.Services {
			if !yield(name) {
				return
			}
		}
	})
	want := slices.Sorted(slices.Values(wantServices))
	if !slices.Equal(got, want) {
		t.Fatalf("services = %v, want %v", got, want)
	}
	for name, s := range p.Services {
		switch {
		case s.Build != nil:
		case s.Image == "":
			t.Errorf("%s: neither image nor build", name)
		default:
			if tag := imageTag(s.Image); tag == "" || tag == "latest" {
				t.Errorf("%s: image %q is not pinned to a version tag", name, s.Image)
			}
		}
	}
	if b := p.Services["tocsin-api"].Build; b == nil || b.Context != mustAbs(t, repoRoot) {
		t.Errorf("tocsin-api must build the repository root, got %+v", b)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "Dockerfile")); err != nil {
		t.Errorf("Dockerfile: %v", err)
	}
	commands := map[string][]string{"tocsin-api": {"serve", "--migrate"}, "tocsin-worker": {"worker"}}
	for name, want := range commands {
		if got := []string(p.Services[name].Command); !slices.Equal(got, want) {
			t.Errorf("%s: command = %q, want %q", name, got, want)
		}
	}
}

// imageTag returns the tag of an image reference, or "" when it has none.
func imageTag(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ""
	}
	return ref[i+1:]
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestComposePorts(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	for name, s := range p.Services {
		var got []string
		for _, port := range s.Ports {
			got = append(got, port.Published+":"+strconv.FormatUint(uint64(port.Target), 10))
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(wantPorts[name]))
		if !slices.Equal(got, want) {
			t.Errorf("%s: published ports = %v, want %v", name, got, want)
		}
	}
}

func TestComposeBindMounts(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	root := mustAbs(t, repoRoot)
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			rel, err := filepath.Rel(root, v.Source)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("%s: bind mount %s is outside the repository", name, v.Source)
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s: bind mount source %s: %v", name, rel, err)
			}
		}
	}
}

// configEnvVars returns the environment variables named by the env tags of
// the Config struct in internal/config/config.go.
func configEnvVars(t *testing.T) map[string]bool {
	t.Helper()
	file := filepath.Join(repoRoot, "internal", "config", "config.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	vars := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			t.Fatalf("%s: Config is not a struct", file)
		}
		for _, field := range st.Fields.List {
			if field.Tag == nil {
				continue
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				t.Fatalf("%s: tag %s: %v", file, field.Tag.Value, err)
			}
			if name := reflect.StructTag(tag).Get("env"); name != "" {
				name, _, _ = strings.Cut(name, ",")
				vars[name] = true
			}
		}
		return false
	})
	if len(vars) == 0 {
		t.Fatalf("%s: no env tags found on Config", file)
	}
	return vars
}

func TestComposeTocsinEnvironment(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	known := configEnvVars(t)
	// Where each service-address setting must point, as service:port.
	wantTargets := map[string]string{
		"TOCSIN_DATABASE_URL":     "postgresql:5432",
		"TOCSIN_TEMPORAL_ADDRESS": "temporal:7233",
		"TOCSIN_MINIO_ENDPOINT":   "minio:9000",
		"TOCSIN_SMTP_ADDR":        "mailpit:1025",
	}
	// Listen addresses must not be loopback, or nothing outside the container
	// reaches them.
	listen := map[string]string{"tocsin-api": "TOCSIN_HTTP_ADDR", "tocsin-worker": "TOCSIN_WORKER_METRICS_ADDR"}
	for _, name := range []string{"tocsin-api", "tocsin-worker"} {
		env := p.Services[name].Environment
		for k, v := range env {
			if strings.HasPrefix(k, "TOCSIN_") && !known[k] {
				t.Errorf("%s: %s is not read by internal/config", name, k)
			}
			if v == nil || *v == "" {
				t.Errorf("%s: %s has no value", name, k)
			}
		}
		for k, want := range wantTargets {
			v := env[k]
			if v == nil {
				t.Errorf("%s: %s is not set", name, k)
				continue
			}
			if got := hostPort(*v); got != want {
				t.Errorf("%s: %s points at %q, want %q", name, k, got, want)
			}
		}
		addr := env[listen[name]]
		if addr == nil {
			t.Errorf("%s: %s is not set", name, listen[name])
			continue
		}
		host, port, err := net.SplitHostPort(*addr)
		if err != nil || (host != "0.0.0.0" && host != "") {
			t.Errorf("%s: %s = %q, want 0.0.0.0:port", name, listen[name], *addr)
		}
		if name == "tocsin-api" && port != "8080" {
			t.Errorf("tocsin-api: %s port = %q, want 8080", listen[name], port)
		}
		if name == "tocsin-worker" && port != "9464" {
			t.Errorf("tocsin-worker: %s port = %q, want 9464", listen[name], port)
		}
	}
	u, err := url.Parse(*p.Services["tocsin-api"].Environment["TOCSIN_DATABASE_URL"])
	if err != nil || strings.TrimPrefix(u.Path, "/") != *p.Services["postgresql"].Environment["POSTGRES_DB"] {
		t.Errorf("TOCSIN_DATABASE_URL must name the database postgresql creates (POSTGRES_DB)")
	}
}

// hostPort returns the host:port of a URL or a bare address.
func hostPort(v string) string {
	if u, err := url.Parse(v); err == nil && u.Host != "" {
		return u.Host
	}
	return v
}

func TestPrometheusConfig(t *testing.T) {
	t.Parallel()
	var cfg struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, "prometheus/prometheus.yml", &cfg)
	if cfg.Global.ScrapeInterval != "15s" {
		t.Errorf("scrape_interval = %q, want 15s", cfg.Global.ScrapeInterval)
	}
	want := map[string]string{"tocsin-api": "tocsin-api:8080", "tocsin-worker": "tocsin-worker:9464"}
	got := map[string]string{}
	for _, sc := range cfg.ScrapeConfigs {
		if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
			t.Errorf("job %s: metrics_path %q, want /metrics", sc.JobName, sc.MetricsPath)
		}
		for _, s := range sc.StaticConfigs {
			for _, target := range s.Targets {
				got[sc.JobName] = target
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scrape targets = %v, want %v", got, want)
	}
	p := loadCompose(t)
	if !mountsFile(p.Services["prometheus"], "deploy/prometheus/prometheus.yml", "/etc/prometheus/prometheus.yml") {
		t.Errorf("prometheus does not mount deploy/prometheus/prometheus.yml at /etc/prometheus/prometheus.yml")
	}
}

// mountsFile reports whether s bind-mounts the repository path src at target.
func mountsFile(s types.ServiceConfig, src, target string) bool {
	abs, _ := filepath.Abs(filepath.Join(repoRoot, src))
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source == abs && v.Target == target {
			return true
		}
	}
	return false
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

func TestGrafanaProvisioning(t *testing.T) {
	t.Parallel()
	var ds struct {
		Datasources []struct {
			UID  string `yaml:"uid"`
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, "grafana/provisioning/datasources/prometheus.yml", &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" ||
		ds.Datasources[0].UID != "prometheus" || hostPort(ds.Datasources[0].URL) != "prometheus:9090" {
		t.Errorf("datasources = %+v, want one prometheus datasource, uid prometheus, at prometheus:9090", ds.Datasources)
	}

	var prov struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, "grafana/provisioning/dashboards/tocsin.yml", &prov)
	if len(prov.Providers) != 1 || prov.Providers[0].Type != "file" {
		t.Fatalf("providers = %+v, want one file provider", prov.Providers)
	}
	p := loadCompose(t)
	g := p.Services["grafana"]
	if !mountsFile(g, "deploy/grafana/dashboards", prov.Providers[0].Options.Path) {
		t.Errorf("grafana does not mount deploy/grafana/dashboards at the provider path %s", prov.Providers[0].Options.Path)
	}
	if !mountsFile(g, "deploy/grafana/provisioning", "/etc/grafana/provisioning") {
		t.Errorf("grafana does not mount deploy/grafana/provisioning at /etc/grafana/provisioning")
	}
	if v := g.Environment["GF_AUTH_ANONYMOUS_ENABLED"]; v == nil || *v != "true" {
		t.Errorf("grafana: anonymous access is not enabled")
	}
	if v := g.Environment["GF_AUTH_ANONYMOUS_ORG_ROLE"]; v == nil || *v != "Viewer" {
		t.Errorf("grafana: anonymous role is not Viewer")
	}
}

type panel struct {
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("grafana/dashboards/tocsin.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID           string  `json:"uid"`
		Title         string  `json:"title"`
		SchemaVersion int     `json:"schemaVersion"`
		Panels        []panel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("tocsin.json: %v", err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion < 36 {
		t.Errorf("dashboard uid %q, title %q, schemaVersion %d: want a uid, a title and schemaVersion >= 36", d.UID, d.Title, d.SchemaVersion)
	}
	var exprs []string
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if p.Title == "" {
				t.Errorf("a %s panel has no title", p.Type)
			}
			if p.Datasource == nil || p.Datasource.UID != "prometheus" {
				t.Errorf("panel %q: datasource is not the provisioned uid prometheus", p.Title)
			}
			n := 0
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) != "" {
					exprs = append(exprs, tg.Expr)
					n++
				}
			}
			if n == 0 || n != len(p.Targets) {
				t.Errorf("panel %q: every panel needs targets, each with an expr", p.Title)
			}
		}
	}
	walk(d.Panels)
	all := strings.Join(exprs, "\n")
	for _, series := range []string{
		"tocsin_http_requests_total", "tocsin_http_request_duration_seconds_bucket", "tocsin_http_requests_in_flight",
		"go_goroutines", "process_resident_memory_bytes",
		"temporal_workflow_completed", "temporal_workflow_failed",
		"temporal_activity_execution_latency_seconds_bucket", "temporal_activity_execution_failed",
		"temporal_request_latency_seconds_bucket", "temporal_worker_task_slots_available",
		"tocsin_deliveries_total", "tocsin_hook_deliveries_total", "tocsin_workflow_starts_pending",
		"tocsin_http_connections", "tocsin_http_connections_refused_total",
		"tocsin_image_decodes", "tocsin_image_decode_waits_total", "tocsin_upload_orphan_objects_removed_total",
	} {
		if !regexp.MustCompile(`\b` + series + `\b`).MatchString(all) {
			t.Errorf("no panel queries %s", series)
		}
	}
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var froms []string
	var user, entrypoint string
	for _, line := range strings.Split(string(b), "\n") {
		instr, args, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			froms = append(froms, strings.Fields(args)[0])
		case "USER":
			user = strings.TrimSpace(args)
		case "ENTRYPOINT":
			entrypoint = strings.TrimSpace(args)
		}
	}
	if len(froms) < 2 {
		t.Errorf("FROM %v: want a build stage and a runtime stage", froms)
	}
	for _, img := range froms {
		if tag := imageTag(img); tag == "" || tag == "latest" {
			t.Errorf("FROM %s is not pinned to a version tag", img)
		}
	}
	if name, _, _ := strings.Cut(user, ":"); name == "" || name == "root" || name == "0" {
		t.Errorf("USER %q: the runtime image must run as a non-root user", user)
	}
	if entrypoint != `["/tocsin"]` {
		t.Errorf(`ENTRYPOINT %s, want ["/tocsin"]`, entrypoint)
	}
	if !strings.Contains(string(b), "CGO_ENABLED=0") || !strings.Contains(string(b), "./cmd/tocsin") {
		t.Errorf("the build stage must build ./cmd/tocsin with CGO_ENABLED=0")
	}
	if _, err := os.Stat(filepath.Join(repoRoot, "cmd", "tocsin")); err != nil {
		t.Errorf("cmd/tocsin: %v", err)
	}

	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	patterns := strings.Fields(string(ignore))
	for _, want := range []string{".git", "bin/", ".data/", "**/node_modules"} {
		if !slices.Contains(patterns, want) {
			t.Errorf(".dockerignore does not exclude %s", want)
		}
	}
}
