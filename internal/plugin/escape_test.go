package plugin

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/present/columns"
)

// hostile are strings a tenant's script, target or runner can get into a TestRun's status
// (check names, metric names, messages, log samples), each meant to act on the terminal of
// whoever reads the results.
var hostile = map[string]string{
	"clear screen":   "\x1b[2J\x1b[Hall good",
	"OSC 8 link":     "\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\",
	"title":          "\x1b]0;pwned\x07",
	"CR overwrite":   "FAILED\rPASSED",
	"bidi override":  "latency \u202eSSAP\u202c",
	"C1 CSI":         "x\u009b31my",
	"backspaces":     "FAIL\b\b\b\bPASS",
	"newline in row": "ok\n  Verdict: PASSED",
}

// controlFree fails when out holds any byte or rune that acts on a terminal; allowed are the
// newlines and tabs the output itself is made of.
func controlFree(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			t.Errorf("%s: control character %U at byte %d in:\n%q", what, r, i, out)
			return
		}
	}
}

func hostileRun() *v1alpha1.TestRun {
	run := tw.MakeTestRun("evil", "team-a").Obj()
	var checks []v1alpha1.NamedCheck
	var thresholds []v1alpha1.ThresholdResult
	var warnings []string
	var findings []v1alpha1.LogFinding
	var conds []v1alpha1.ScenarioResult
	var compared []v1alpha1.MetricComparison
	for name, s := range hostile {
		compared = append(compared, v1alpha1.MetricComparison{Name: s, Stat: s, Unit: s, Baseline: s, Current: s, RatioPercent: s, Band: s,
			CILowPercent: s, PValue: s, Decision: v1alpha1.ComparisonRegressed, Note: s}, v1alpha1.MetricComparison{Name: name, Decision: v1alpha1.ComparisonNoData, Note: s})
		checks = append(checks, v1alpha1.NamedCheck{Name: s, Group: s})
		thresholds = append(thresholds, v1alpha1.ThresholdResult{Metric: s, Expression: s, Value: s})
		warnings = append(warnings, s)
		findings = append(findings, v1alpha1.LogFinding{Pattern: s, Count: 1, Sample: s})
		conds = append(conds, v1alpha1.ScenarioResult{Name: name + s})
	}
	run.Status = v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseFailed, Reason: "X\x1b[2J", Message: hostile["OSC 8 link"] + hostile["CR overwrite"],
		Verdict: v1alpha1.VerdictFailed, GeneratorBound: true, GeneratorBoundReason: hostile["bidi override"],
		Results: &v1alpha1.Results{Checks: &v1alpha1.CheckCounts{ByName: checks}, Thresholds: thresholds, Warnings: warnings, Scenarios: conds},
		Target:  &v1alpha1.TargetUsage{LogFindings: findings},
		Comparison: &v1alpha1.Comparison{Baseline: &v1alpha1.ComparedRun{Name: hostile["title"], Source: hostile["CR overwrite"]},
			Decision: v1alpha1.ComparisonRegressed, Worst: hostile["clear screen"], Method: hostile["OSC 8 link"], Message: hostile["bidi override"], Metrics: compared}}
	return run
}

func TestOutputsEscapeControlCharacters(t *testing.T) {
	run := hostileRun()

	var shown bytes.Buffer
	writeTestRun(&shown, run, true)
	controlFree(t, "describe", shown.String())
	for _, want := range []string{`\x1b[2J`, `\u202e`, `FAILED\rPASSED`, `\x1b]8;;https://evil.example/`} {
		if !strings.Contains(shown.String(), want) {
			t.Errorf("describe: want %q shown escaped, so the reader sees it was there:\n%s", want, shown.String())
		}
	}
	if strings.Contains(shown.String(), "\n  Verdict: PASSED") {
		t.Errorf("describe: a check name's newline made a row of its own:\n%s", shown.String())
	}

	var progress bytes.Buffer
	(&progressPrinter{w: &progress, terminal: true}).show(run)
	// The printer's own \r\x1b[K rewrites its line; nothing after it may act.
	controlFree(t, "follow", strings.TrimPrefix(progress.String(), "\r\x1b[K"))

	var junit bytes.Buffer
	enc := xml.NewEncoder(&junit)
	if err := enc.Encode(junitTestRun(run)); err != nil {
		t.Fatal(err)
	}
	controlFree(t, "junit", junit.String())
	var doc junitDoc
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatalf("junit is not valid XML: %v\n%s", err, junit.String())
	}

	var table bytes.Buffer
	row := columns.RunRow(run)
	row.Keys = map[string]string{columns.Test: hostile["clear screen"]}
	if err := writeCSV(&table, []columns.Row{row}); err != nil {
		t.Fatal(err)
	}
	controlFree(t, "csv", table.String())
	if _, err := csv.NewReader(&table).ReadAll(); err != nil {
		t.Errorf("csv: %v", err)
	}

	var compared bytes.Buffer
	writeCompare(&compared, &CompareDocument{Baseline: "a", Current: "evil", Tested: true, Comparison: run.Status.Comparison,
		Decision: "Regressed", Worst: hostile["clear screen"], Method: hostile["OSC 8 link"], Message: hostile["bidi override"],
		Notes: []string{hostile["title"]}, Rows: rowCells(columns.TestedRows(run.Status.Comparison))})
	controlFree(t, "compare", compared.String())
	if strings.Contains(compared.String(), "\n  Verdict: PASSED") {
		t.Errorf("compare: a metric's newline made a row of its own:\n%s", compared.String())
	}

	var stderr bytes.Buffer
	streams := genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, ErrOut: &stderr}
	printError(streams, errors.New("runner answered: "+hostile["clear screen"]))
	controlFree(t, "error", stderr.String())
}
