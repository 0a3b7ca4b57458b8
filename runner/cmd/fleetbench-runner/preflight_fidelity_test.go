package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// runPreflight runs the operator's pre-flight on the fleet's test, as pkg/runners.PreflightJob
// builds it: runner 0's arguments without the fleet's own --no-setup, --no-teardown and
// --linger, the user's flags, the runners' environment. k6 run accepted the test, or it fails.
func runPreflight(t *testing.T, bin, dir, js string, env, userArgs []string) measure.CheckReport {
	t.Helper()
	args := []string{"check", "run", "--quiet", "--execution-segment", threeSegments[0], "--execution-segment-sequence", segmentSeq,
		"--paused", "--address", loopbackAddr(t), "--out", "fleetbench", "--summary-mode=disabled", "--no-thresholds"}
	args = append(append(args, userArgs...), js)
	out, code, err := runK6Process(bin, dir, env, args...)
	if err != nil || code != 0 {
		t.Fatalf("the pre-flight refused what k6 run runs (exit %d, %v):\n%s", code, err, out)
	}
	report, ok := measure.ParseCheckReport(string(out))
	if !ok || len(report.Segments) != len(threeSegments) {
		t.Fatalf("the pre-flight printed no plan of %d segments:\n%s", len(threeSegments), out)
	}
	return report
}

// The pre-flight refuses what k6 run refuses, with k6's words, and no load is sent.
func TestPreflightRefusesWhatK6Refuses(t *testing.T) {
	bin := buildRunner(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, src string
		args      []string
		code      int
		says      string
	}{
		{name: "unknown flag", src: "export default function () {}", args: []string{"--vuz", "3"}, code: 255, says: "unknown flag: --vuz"},
		{name: "missing module", src: "import x from './nope.js';\nexport default function () {}", code: 107, says: "couldn't be found on local disk"},
		{name: "missing extension", src: "import x from 'k6/x/nope';\nexport default function () {}", code: 107, says: "unknown modules"},
		{name: "bad options", src: "export const options = { vus: -1 };\nexport default function () {}", code: 104, says: "the number of VUs must be more than 0"},
		// Shortcuts next to scenarios: k6 v2.2.0 refuses these three (vus alone overrides the
		// scenarios, see testdata/fidelity/shortcut_vus_with_scenarios.js).
		{name: "duration and scenarios", src: shortcutWithScenarios("duration: '10s'"), code: 104, says: "using `duration` and `scenarios` options simultaneously is not allowed"},
		{name: "iterations and scenarios", src: shortcutWithScenarios("iterations: 7"), code: 104, says: "using `iterations` and `scenarios` options simultaneously is not allowed"},
		{name: "stages and scenarios", src: shortcutWithScenarios("stages: [{ duration: '1s', target: 2 }]"), code: 104, says: "using `stages` and `scenarios` options simultaneously is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".js")
			writeFile(t, js, tc.src)
			args := append(append([]string{"check", "run", "--out", "fleetbench"}, tc.args...), js)
			out, code, err := runK6Process(bin, dir, []string{"K6_AUTO_EXTENSION_RESOLUTION=false"}, args...)
			if err != nil || code != tc.code || !strings.Contains(string(out), tc.says) {
				t.Errorf("exit %d (%v), want %d saying %q:\n%s", code, err, tc.code, tc.says, out)
			}
			if _, ok := measure.ParseCheckReport(string(out)); ok {
				t.Errorf("a refused test has no plan:\n%s", out)
			}
		})
	}
	// Without fleetbench's output among the flags the check adds it: it never runs the load.
	js := filepath.Join(dir, "ok.js")
	writeFile(t, js, "export default function () { throw new Error('the check ran an iteration'); }")
	out, code, err := runK6Process(bin, dir, nil, "check", "run", "--vus", "2", js)
	if r, ok := measure.ParseCheckReport(string(out)); err != nil || code != 0 || !ok || r.Segments[0].MaxVUs != 2 {
		t.Errorf("exit %d (%v), report %+v:\n%s", code, err, r, out)
	}
	if err := exec.Command(bin, "check", "inspect", js).Run(); err == nil {
		t.Error("check accepts only k6 run's arguments")
	}
}

// shortcutWithScenarios is a script whose options put a top-level shortcut next to scenarios.
func shortcutWithScenarios(shortcut string) string {
	return "export const options = { " + shortcut + ", scenarios: { a: { executor: 'shared-iterations', vus: 2, iterations: 4 } } };\n" +
		"export default function () {}"
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
