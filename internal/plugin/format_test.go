package plugin

import (
	"slices"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// Plain tests of the formatting: no API server involved.

func TestProgressLine(t *testing.T) {
	live := progress("40s", 8000, "201.25", "0.05", "")
	live.Expected = ""
	for _, tc := range []struct {
		name   string
		status v1alpha1.TestRunStatus
		want   string
	}{
		{"no status yet", v1alpha1.TestRunStatus{}, "Pending"},
		{"reason and a message over lines", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseProvisioning, Reason: "TargetProvisioning", Message: "waiting\n  for the target"},
			"Provisioning (TargetProvisioning: waiting for the target)"},
		{"running without progress yet", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning}, "Running"},
		{"running, unbounded duration, no p95", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Progress: live},
			"Running      40s  requests 8000  201.25 req/s  errors 0.05%"},
		{"passed", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed}, "Succeeded    verdict PASSED"},
		{"failed with a reason", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseFailed, Verdict: v1alpha1.VerdictFailed, Reason: "ProfileNotFound"},
			"Failed       verdict FAILED (ProfileNotFound)"},
		{"a verdict before the end is not shown", v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseCollecting, Verdict: v1alpha1.VerdictPassed}, "Collecting"},
	} {
		run := tw.MakeTestRun("x", "ns").Obj()
		run.Status = tc.status
		if got := progressLine(run); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		phase   v1alpha1.TestRunPhase
		verdict v1alpha1.Verdict
		want    int
	}{
		{v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, ExitPassed},
		{v1alpha1.PhaseSucceeded, v1alpha1.VerdictFailed, ExitFailed},
		{v1alpha1.PhaseSucceeded, v1alpha1.VerdictRegressed, ExitFailed},
		{v1alpha1.PhaseSucceeded, v1alpha1.VerdictInconclusive, ExitError},
		{v1alpha1.PhaseSucceeded, "", ExitError},
		{v1alpha1.PhaseFailed, v1alpha1.VerdictPassed, ExitError},
		{v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, ExitError},
	} {
		run := &v1alpha1.TestRun{Status: v1alpha1.TestRunStatus{Phase: tc.phase, Verdict: tc.verdict}}
		if got := exitCode(run); got != tc.want {
			t.Errorf("%s %s: exit %d, want %d", tc.phase, tc.verdict, got, tc.want)
		}
	}
}

func TestRunCase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		phase   v1alpha1.TestRunPhase
		verdict v1alpha1.Verdict
		// want is "failure TYPE: MESSAGE", "error TYPE: MESSAGE" or "".
		want string
	}{
		{"passed", v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, ""},
		{"failed verdict", v1alpha1.PhaseSucceeded, v1alpha1.VerdictFailed, "failure FAILED: verdict FAILED"},
		{"inconclusive", v1alpha1.PhaseSucceeded, v1alpha1.VerdictInconclusive, "failure INCONCLUSIVE: verdict INCONCLUSIVE"},
		{"runtime error", v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, "error Broken: phase Failed: Broken"},
		{"unfinished", v1alpha1.PhaseRunning, "", "error NotFinished: not finished: phase Running"},
	} {
		c := runCase("r", "fleetbench.testrun", tc.phase, tc.verdict, "Broken", "a\nmessage")
		got := ""
		switch {
		case c.Failure != nil && c.Error != nil:
			t.Errorf("%s: both a failure and an error", tc.name)
		case c.Failure != nil:
			got = "failure " + c.Failure.Type + ": " + c.Failure.Message
		case c.Error != nil:
			got = "error " + c.Error.Type + ": " + c.Error.Message
		}
		if c.Failure != nil && c.Failure.Text != "Broken: a message" {
			t.Errorf("%s: failure text %q, want the reason and the message on one line", tc.name, c.Failure.Text)
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestWriteTestRunWhileRunning: a running TestRun shows its live progress, that the generator
// was the limit, and the warnings; no verdict yet.
func TestWriteTestRunWhileRunning(t *testing.T) {
	run := tw.MakeTestRun("live", "ns").Obj()
	run.Status = v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseRunning, Progress: progress("40s", 8000, "201.25", "0.05", "15ms"),
		GeneratorBound: true, GeneratorBoundReason: "runner CPU at 97%",
		Results: &v1alpha1.Results{Partial: true, Warnings: []string{"tag url has\nmore than 200 values"}}}
	var b strings.Builder
	writeTestRun(&b, run, false)
	lines := normLines(b.String())
	for _, want := range []string{
		"TestRun: ns/live",
		"Verdict: -",
		"Progress: Running 40s/1m0s requests 8000 201.25 req/s errors 0.05% p95 15ms",
		"Generator bound: yes: runner CPU at 97%",
		"Partial: yes: some runner's results could not be read; the numbers cover the rest",
		"Warnings:",
		"- tag url has more than 200 values",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in:\n%s", want, b.String())
		}
	}
	run.Status.Phase, run.Status.Verdict = v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed
	b.Reset()
	writeTestRun(&b, run, false)
	if strings.Contains(b.String(), "Progress:") {
		t.Errorf("a finished run shows its stale progress:\n%s", b.String())
	}
}

// TestWritePlanMarksGeneratorBoundRows: a row whose generators were the limit says so in its
// verdict cell.
func TestWritePlanMarksGeneratorBoundRows(t *testing.T) {
	plan := tw.MakeCapacityPlan("p", "ns", tw.MakeTestRun("t", "ns").Obj(), "C1").Obj()
	plan.Status.Table = []v1alpha1.CapacityRow{
		{Profile: "C1", Repetition: 1, Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed, GeneratorBound: true, TestRun: "p-c1"},
	}
	var b strings.Builder
	writePlan(&b, plan, false)
	row := cells(lineWith(t, b.String(), "C1 1 Succeeded"))
	if want := []string{"C1", "1", "Succeeded", "PASSED (generator-bound)"}; len(row) < 4 || !slices.Equal(row[:4], want) {
		t.Errorf("row %q, want it to start with %q", row, want)
	}
}
