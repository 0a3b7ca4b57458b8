package plugin

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// progress is a live view as the operator writes it while the load runs.
func progress(elapsed string, requests int64, rps, errors, p95 string) *v1alpha1.Progress {
	return &v1alpha1.Progress{Summary: elapsed + "/1m0s", Elapsed: elapsed, Expected: "1m0s", Requests: requests,
		RequestsPerSecond: rps, ErrorPercent: errors, P95: p95, UpdateTime: metav1.Now()}
}

// finish ends a run as the operator would.
func finish(phase v1alpha1.TestRunPhase, verdict v1alpha1.Verdict, reason, message string) func(*v1alpha1.TestRunStatus) {
	return func(s *v1alpha1.TestRunStatus) {
		now := metav1.Now()
		start := metav1.NewTime(now.Add(-time.Minute))
		s.Phase, s.Verdict, s.Reason, s.Message, s.Progress = phase, verdict, reason, message, nil
		s.StartTime, s.CompletionTime = &start, &now
		s.Results = &v1alpha1.Results{Requests: &v1alpha1.RequestCounts{Total: 12000, Accepted: 11990, Dropped: 10, DroppedPercent: "0.08"},
			Throughput: &v1alpha1.Throughput{RequestsPerSecond: "200.00"}, Latency: &v1alpha1.Latency{Avg: "9ms", P50: "8ms", P95: "21ms", P99: "40ms"}}
	}
}

// TestRunFollowsToPassed creates a TestRun from a file and follows it while the test plays the
// operator through Provisioning, Running (with live progress) and Succeeded/PASSED.
func TestRunFollowsToPassed(t *testing.T) {
	ns := namespace(t)
	file := manifestFile(t, "quick")
	r := start(t, ns, "run", "-f", file)
	r.waitOutput(t, "testrun "+ns+"/quick created")
	waitExists(t, ns, "quick")
	r.waitOutput(t, "Pending")

	setStatus(t, ns, "quick", func(s *v1alpha1.TestRunStatus) {
		s.Phase, s.Reason, s.Message = v1alpha1.PhaseProvisioning, "TargetProvisioning", "waiting for the target to be Ready"
	})
	r.waitOutput(t, "Provisioning (TargetProvisioning: waiting for the target to be Ready)")
	setStatus(t, ns, "quick", func(s *v1alpha1.TestRunStatus) {
		s.Phase, s.Reason, s.Message = v1alpha1.PhaseRunning, "", ""
		s.Progress = progress("10s", 2000, "199.50", "0.00", "12ms")
	})
	r.waitOutput(t, "Running      10s/1m0s  requests 2000  199.50 req/s  errors 0.00%  p95 12ms")
	setStatus(t, ns, "quick", func(s *v1alpha1.TestRunStatus) { s.Progress = progress("40s", 8000, "201.25", "0.05", "15ms") })
	r.waitOutput(t, "Running      40s/1m0s  requests 8000  201.25 req/s  errors 0.05%  p95 15ms")
	setStatus(t, ns, "quick", finish(v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, "", ""))

	res := r.wait(t)
	if res.code != ExitPassed {
		t.Fatalf("exit %d, want 0; stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	// One line per change (stdout is not a terminal), in order, then the results table.
	var lines []string
	for _, l := range strings.Split(res.stdout, "\n") {
		if strings.HasPrefix(l, "Pending") || strings.HasPrefix(l, "Provisioning") || strings.HasPrefix(l, "Running") || strings.HasPrefix(l, "Succeeded") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	want := []string{
		"Pending",
		"Provisioning (TargetProvisioning: waiting for the target to be Ready)",
		"Running      10s/1m0s  requests 2000  199.50 req/s  errors 0.00%  p95 12ms",
		"Running      40s/1m0s  requests 8000  201.25 req/s  errors 0.05%  p95 15ms",
		"Succeeded    verdict PASSED",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress lines:\n%s\nwant:\n%s\nfull output:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"), res.stdout)
	}
	for _, s := range []string{"Verdict:", "PASSED", "total 12000  accepted 11990  dropped 10  dropped 0.08%", "200.00 req/s", "p95 21ms"} {
		if !strings.Contains(res.stdout, s) {
			t.Errorf("results table lacks %q:\n%s", s, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "\r") {
		t.Errorf("a line was rewritten in place though stdout is not a terminal:\n%q", res.stdout)
	}

	// The same file again: the run exists and finished, so it is not silently re-used.
	again := plugin(t, ns, "run", "-f", file)
	if again.code != ExitError || !strings.Contains(again.stderr, "already exists and finished") {
		t.Errorf("second run: exit %d, stderr %q; want 2 and 'already exists and finished'", again.code, again.stderr)
	}
}

// TestRunExitCodes creates TestRuns from files with `run -f` and follows each to an ending other
// than PASSED (TestRunFollowsToPassed): FAILED exits 1; INCONCLUSIVE and phase Failed exit 2.
// The Failed run ends while Provisioning, before any load, as a missing profile does.
func TestRunExitCodes(t *testing.T) {
	ns := namespace(t)
	for _, tc := range []struct {
		name    string
		phase   v1alpha1.TestRunPhase
		verdict v1alpha1.Verdict
		reason  string
		running bool
		code    int
		line    string
	}{
		{"failed", v1alpha1.PhaseSucceeded, v1alpha1.VerdictFailed, "ThresholdsFailed", true, ExitFailed,
			"Succeeded    verdict FAILED (ThresholdsFailed: played by the test)"},
		{"inconclusive", v1alpha1.PhaseSucceeded, v1alpha1.VerdictInconclusive, "GeneratorBound", true, ExitError,
			"Succeeded    verdict INCONCLUSIVE (GeneratorBound: played by the test)"},
		{"phase-failed", v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, "ProfileNotFound", false, ExitError,
			"Failed       verdict FAILED (ProfileNotFound: played by the test)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := start(t, ns, "run", "-f", manifestFile(t, tc.name))
			r.waitOutput(t, "testrun "+ns+"/"+tc.name+" created")
			waitExists(t, ns, tc.name)
			r.waitOutput(t, "Pending")
			if tc.running {
				setStatus(t, ns, tc.name, func(s *v1alpha1.TestRunStatus) {
					s.Phase = v1alpha1.PhaseRunning
					s.Progress = progress("5s", 1000, "200.00", "0.00", "")
				})
				r.waitOutput(t, "Running      5s/1m0s  requests 1000  200.00 req/s  errors 0.00%\n")
			} else {
				setStatus(t, ns, tc.name, func(s *v1alpha1.TestRunStatus) {
					s.Phase, s.Reason, s.Message = v1alpha1.PhaseProvisioning, "TargetProvisioning", "waiting for the target to be Ready"
				})
				r.waitOutput(t, "Provisioning (TargetProvisioning: waiting for the target to be Ready)")
			}
			setStatus(t, ns, tc.name, finish(tc.phase, tc.verdict, tc.reason, "played by the test"))
			res := r.wait(t)
			checkEnding(t, res, tc.code, tc.line, tc.verdict)
		})
	}
}

// manifestFile writes a TestRun named name, without a namespace, as a file for `run -f`.
func manifestFile(t *testing.T, name string) string {
	t.Helper()
	manifest, err := yaml.Marshal(tw.MakeTestRun(name, "").Obj())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "testrun.yaml")
	if err := os.WriteFile(file, manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// checkEnding checks a followed run's exit code, last progress line and results table.
func checkEnding(t *testing.T, res result, code int, line string, verdict v1alpha1.Verdict) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", res.code, code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stdout, line+"\n") {
		t.Errorf("no final line %q in:\n%s", line, res.stdout)
	}
	if !regexp.MustCompile(`\n\s*Verdict:\s+` + string(verdict) + `\n`).MatchString(res.stdout) {
		t.Errorf("results table lacks the verdict:\n%s", res.stdout)
	}
}

// TestWaitExitCodes follows existing TestRuns to each ending and checks the exit code.
func TestWaitExitCodes(t *testing.T) {
	ns := namespace(t)
	for _, tc := range []struct {
		name    string
		phase   v1alpha1.TestRunPhase
		verdict v1alpha1.Verdict
		reason  string
		code    int
		line    string
	}{
		{"passed", v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, "", ExitPassed, "Succeeded    verdict PASSED (played by the test)"},
		{"failed", v1alpha1.PhaseSucceeded, v1alpha1.VerdictFailed, "ThresholdsFailed", ExitFailed, "Succeeded    verdict FAILED (ThresholdsFailed: played by the test)"},
		{"inconclusive", v1alpha1.PhaseSucceeded, v1alpha1.VerdictInconclusive, "GeneratorBound", ExitError, "Succeeded    verdict INCONCLUSIVE (GeneratorBound: played by the test)"},
		{"runtime-error", v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, "ProfileNotFound", ExitError, "Failed       verdict FAILED (ProfileNotFound: played by the test)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := env.Client.Create(ctx, tw.MakeTestRun(tc.name, ns).Obj()); err != nil {
				t.Fatal(err)
			}
			r := start(t, ns, "wait", tc.name)
			r.waitOutput(t, "Pending")
			setStatus(t, ns, tc.name, func(s *v1alpha1.TestRunStatus) {
				s.Phase = v1alpha1.PhaseRunning
				s.Progress = progress("5s", 1000, "200.00", "0.00", "")
			})
			r.waitOutput(t, "Running      5s/1m0s  requests 1000  200.00 req/s  errors 0.00%\n")
			setStatus(t, ns, tc.name, finish(tc.phase, tc.verdict, tc.reason, "played by the test"))
			res := r.wait(t)
			checkEnding(t, res, tc.code, tc.line, tc.verdict)
			// wait on the finished run returns at once with the same code.
			if again := plugin(t, ns, "wait", "testrun/"+tc.name); again.code != tc.code {
				t.Errorf("wait on the finished run: exit %d, want %d", again.code, tc.code)
			}
		})
	}
}

// TestWaitTimeout: the wait is bounded; expiry exits 2 and says so.
func TestWaitTimeout(t *testing.T) {
	ns := namespace(t)
	if err := env.Client.Create(ctx, tw.MakeTestRun("slow", ns).Obj()); err != nil {
		t.Fatal(err)
	}
	res := plugin(t, ns, "wait", "slow", "--timeout", "2s")
	if res.code != ExitError || !strings.Contains(res.stderr, "timed out after 2s") || !strings.Contains(res.stderr, "kubectl fleetbench wait slow -n "+ns) {
		t.Errorf("exit %d, stderr %q: want 2 and a timeout message saying how to follow the run again", res.code, res.stderr)
	}
	if res := plugin(t, ns, "wait", "missing"); res.code != ExitError || !strings.Contains(res.stderr, "not found") {
		t.Errorf("wait for a missing TestRun: exit %d, stderr %q", res.code, res.stderr)
	}
}

func TestParseName(t *testing.T) {
	for _, tc := range []struct {
		arg  string
		plan bool
		kind kind
		name string
		err  bool
	}{
		{"a", false, kindAny, "a", false},
		{"a", true, kindPlan, "a", false},
		{"testrun/a", false, kindTestRun, "a", false},
		{"tr/a", false, kindTestRun, "a", false},
		{"cp/a", false, kindPlan, "a", false},
		{"capacityplan/a", false, kindPlan, "a", false},
		{"capacityplans.fleetbench.dev/a", false, kindPlan, "a", false},
		{"pod/a", false, 0, "", true},
		{"testrun/a", true, 0, "", true},
	} {
		k, name, err := parseName(tc.arg, tc.plan)
		if (err != nil) != tc.err || k != tc.kind || name != tc.name {
			t.Errorf("parseName(%q, %v) = %v %q %v; want %v %q error %v", tc.arg, tc.plan, k, name, err, tc.kind, tc.name, tc.err)
		}
	}
}

func TestReadTestRunRejects(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"two.yaml":  "apiVersion: fleetbench.dev/v1alpha1\nkind: TestRun\nmetadata: {name: a}\n---\napiVersion: fleetbench.dev/v1alpha1\nkind: TestRun\nmetadata: {name: b}\n",
		"kind.yaml": "apiVersion: fleetbench.dev/v1alpha1\nkind: CapacityPlan\nmetadata: {name: a}\n",
		"name.yaml": "apiVersion: fleetbench.dev/v1alpha1\nkind: TestRun\nspec: {}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := readTestRun(nil, path); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
	ok := "# a comment\n---\napiVersion: fleetbench.dev/v1alpha1\nkind: TestRun\nmetadata: {name: a}\n"
	run, err := readTestRun(strings.NewReader(ok), "-")
	if err != nil || run.Name != "a" {
		t.Errorf("from stdin: %v %v", run, err)
	}
}

// TestProgressPrinterTerminal: on a terminal the line is rewritten in place, an unchanged line
// is not printed again, and end closes the line.
func TestProgressPrinterTerminal(t *testing.T) {
	var b strings.Builder
	p := &progressPrinter{w: &b, terminal: true}
	run := tw.MakeTestRun("x", "ns").Obj()
	run.Status.Phase = v1alpha1.PhaseRunning
	run.Status.Progress = progress("1s", 10, "10.00", "0.00", "3ms")
	p.show(run)
	p.show(run)
	run.Status.Progress = progress("2s", 20, "10.00", "0.00", "3ms")
	p.show(run)
	p.end()
	want := "\r\033[KRunning      1s/1m0s  requests 10  10.00 req/s  errors 0.00%  p95 3ms" +
		"\r\033[KRunning      2s/1m0s  requests 20  10.00 req/s  errors 0.00%  p95 3ms\n"
	if b.String() != want {
		t.Errorf("terminal output %q, want %q", b.String(), want)
	}
}
