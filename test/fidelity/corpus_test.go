package fidelity

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseDirectives(t *testing.T) {
	s, err := parse("shape.js", `// Source: https://grafana.com/docs/k6/latest/using-k6/scenarios/
// Covers: every directive.
// fidelity: cluster
// fidelity: split-differs
// fidelity: verdicts-only
// fidelity: args --vus 3
// fidelity: args --iterations 30
// fidelity: env K6_VUS=3 NAME=a=b
// fidelity: config shape.json
// fidelity: file users.json ids.csv
import http from 'k6/http';
// fidelity: cluster-not-a-header-line
export default function () {}
`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "shape" || s.Origin != "https://grafana.com/docs/k6/latest/using-k6/scenarios/" ||
		!s.Cluster || !s.SplitDiffers || !s.VerdictsOnly || s.Config != "shape.json" ||
		!slices.Equal(s.Files, []string{"users.json", "ids.csv"}) ||
		!slices.Equal(s.Args, []string{"--vus", "3", "--iterations", "30"}) ||
		!slices.Equal(s.Env, []string{"K6_VUS=3", "NAME=a=b"}) {
		t.Errorf("parsed %+v", s)
	}
	if got := s.RunArgs("/test"); !slices.Equal(got, []string{"--vus", "3", "--iterations", "30", "--config", "/test/shape.json"}) {
		t.Errorf("RunArgs = %q", got)
	}

	// Without the directive, a script is held to k6's counts when split.
	plain, err := parse("plain.js", "// Source: x\nexport default function () {}\n")
	if err != nil || plain.SplitDiffers || plain.Cluster || plain.VerdictsOnly {
		t.Errorf("parsed %+v, %v", plain, err)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"no source":              "// Covers: nothing.\nexport default function () {}\n",
		"source after the code":  "export default function () {}\n// Source: x\n",
		"unknown directive":      "// Source: x\n// fidelity: split-differ\n",
		"split-differs with arg": "// Source: x\n// fidelity: split-differs yes\n",
		"empty directive":        "// Source: x\n// fidelity:\n",
		"env without value":      "// Source: x\n// fidelity: env K6_VUS\n",
		"config with a path":     "// Source: x\n// fidelity: config ../secret.json\n",
		"args without flags":     "// Source: x\n// fidelity: args\n",
		"file with a path":       "// Source: x\n// fidelity: file ../../etc/passwd\n",
		"file without a name":    "// Source: x\n// fidelity: file\n",
		"a script as a file":     "// Source: x\n// fidelity: file other.js\n",
	} {
		if _, err := parse("bad.js", text); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// The corpus itself: every script parses (names its source), and its config files exist.
func TestCorpusLoads(t *testing.T) {
	dir := filepath.Join("..", "..", "runner", "cmd", "fleetbench-runner", "testdata", "fidelity")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("the runner module's corpus is not here:", err)
	}
	scripts, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		if !strings.HasPrefix(s.Origin, "http") && !strings.Contains(s.Origin, "http") {
			t.Errorf("%s: source %q names no address", s.Name, s.Origin)
		}
	}
}

func TestLoadChecksTheFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.js"), []byte("// Source: x\n// fidelity: config a.json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("loaded a script whose config file is missing")
	}
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(dir); err != nil || len(s) != 1 || s[0].Config != "a.json" {
		t.Fatalf("Load = %+v, %v", s, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.js"), []byte("// Source: x\n// fidelity: file data.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("loaded a script whose data file is missing")
	}
}
