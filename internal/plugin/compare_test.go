package plugin

import (
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// createRun creates the TestRun and writes the status w gave it, as the operator would.
func createRun(t *testing.T, w *tw.TestRunWrapper) *v1alpha1.TestRun {
	t.Helper()
	run := w.Obj()
	status := *run.Status.DeepCopy()
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	setStatus(t, run.Namespace, run.Name, func(s *v1alpha1.TestRunStatus) { *s = status })
	return run
}

// tableRows are the printed table's lines from the header starting with header, cells split.
func tableRows(t *testing.T, out, header string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case !in && strings.HasPrefix(norm(l), header):
			in = true
		case in && strings.TrimSpace(l) == "":
			return rows
		}
		if in {
			rows = append(rows, cells(l))
		}
	}
	if !in {
		t.Fatalf("no table headed %q in:\n%s", header, out)
	}
	return rows
}

// TestCompareTested: B compared with A by the operator prints B's status.comparison, with its
// CI and p-value, as a table and as JSON; deleting A (a TTL) leaves it printable.
func TestCompareTested(t *testing.T) {
	ns := namespace(t)
	a := createRun(t, tw.MakeTestRun("v1", ns).Measured(v1alpha1.VerdictPassed))
	createRun(t, tw.MakeTestRun("v2", ns).Measured(v1alpha1.VerdictRegressed).
		Compared("v1", string(a.UID), tw.ThroughputDrop(), tw.LatencyWithin(), tw.MemoryTooFew()))

	res := plugin(t, ns, "compare", "v1", "v2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	want := [][]string{
		{"METRIC", "BASELINE", "CURRENT", "% OF PREVIOUS", "BAND", "DECISION", "95% CI", "P-VALUE", "SAMPLES", "NOTE"},
		{"throughput (req/s)", "200.00", "142.40", "71.20", "success ≥ 100 %, ok ≥ 80 %", "Regressed", "[65.10, 77.30] %", "0.0004", "30 / 30", "-"},
		{"latencyP95 (ms)", "25", "26", "104.00", "success ≤ 100 %, ok ≤ 120 %", "OK", "[98.50, 109.20] %", "0.21", "30 / 30", "-"},
		{"targetMemory (MiB)", "61", "64", "104.92", "success ≤ 100 %, ok ≤ 120 %", "TooFewSamples", "-", "-", "3 / 3",
			"3 samples a side: a rank test needs 4 to reach p < 0.05"},
	}
	if got := tableRows(t, res.stdout, "METRIC BASELINE"); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("table\n got %q\nwant %q\n%s", got, want, res.stdout)
	}
	for _, line := range []string{"Decision: Regressed: throughput 71.20 % of baseline", "Baseline (A): v1", "This run (B): v2"} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "no significance test") || strings.Contains(res.stdout, "no test") {
		t.Errorf("a tested comparison says it has no test:\n%s", res.stdout)
	}

	js := plugin(t, ns, "compare", "tr/v1", "v2", "-o", "json")
	var doc CompareDocument
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, js.stdout)
	}
	if !doc.Tested || doc.Source != sourceStatus || doc.Decision != "Regressed" || len(doc.Rows) != 3 || doc.Rows[0]["pValue"] != "0.0004" ||
		doc.Comparison == nil || doc.Comparison.Metrics[0].CILowPercent != "65.10" || doc.Baseline != "v1" || doc.Current != "v2" {
		t.Errorf("json document %+v", doc)
	}

	// A deleted by its TTL: B's comparison still names it.
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := plugin(t, ns, "compare", "v1", "v2"); res.code != 0 || !strings.Contains(res.stdout, "71.20") {
		t.Errorf("after A's deletion: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// A recreated under the same name is not the run B was compared with: say so.
	createRun(t, tw.MakeTestRun("v1", ns).Measured(v1alpha1.VerdictPassed))
	if res := plugin(t, ns, "compare", "v1", "v2"); res.code != 0 || !strings.Contains(res.stdout, "earlier TestRun named v1") {
		t.Errorf("A recreated: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// TestCompareSideBySide: two runs B was not compared with A by the operator: the table is made
// from their status alone, says that there is no significance test, and never says Regressed.
func TestCompareSideBySide(t *testing.T) {
	ns := namespace(t)
	createRun(t, tw.MakeTestRun("v1", ns).Measured(v1alpha1.VerdictPassed))
	v2 := tw.MakeTestRun("v2", ns).Measured(v1alpha1.VerdictPassed)
	v2.Status.Results.Throughput.RequestsPerSecond = "3.50"
	v2.Status.Results.Latency.P95 = "26.4ms"
	v2.Status.Target.Memory.PeakMiB = 61
	createRun(t, v2)

	res := plugin(t, ns, "compare", "v1", "v2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	lower, higher := "success ≤ 100 %, ok ≤ 120 %", "success ≥ 100 %, ok ≥ 80 %"
	want := [][]string{
		{"METRIC", "BASELINE", "CURRENT", "% OF PREVIOUS", "BAND", "DECISION"},
		{"throughput (req/s)", "4.66", "3.50", "75.11", higher, "beyond ok band (no test)"},
		{"latencyP95 (ms)", "24", "26.4", "110.00", lower, "ok (no test)"},
		{"latencyP99 (ms)", "41.7", "41.7", "100.00", lower, "success (no test)"},
		{"targetMemory (MiB)", "61", "61", "100.00", lower, "success (no test)"},
		{"memoryPerDevice (KiB)", "13.31", "13.31", "100.00", lower, "success (no test)"},
		{"targetCPU (cores per core)", "0.07", "0.07", "100.00", lower, "success (no test)"},
	}
	if got := tableRows(t, res.stdout, "METRIC BASELINE"); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("table\n got %q\nwant %q\n%s", got, want, res.stdout)
	}
	if !strings.Contains(norm(res.stdout), "no significance test: v2 has no status.comparison with v1 as its baseline") ||
		strings.Contains(res.stdout, "Regressed") || strings.Contains(res.stdout, "P-VALUE") {
		t.Errorf("side-by-side output:\n%s", res.stdout)
	}
	js := plugin(t, ns, "compare", "v1", "v2", "-o", "json")
	var doc CompareDocument
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, js.stdout)
	}
	if doc.Tested || doc.Source != sourceSideBySide || doc.Comparison != nil || len(doc.Rows) != 6 || doc.Rows[0]["decision"] != "beyond ok band (no test)" ||
		len(doc.Notes) == 0 || !strings.Contains(doc.Method, "no significance test") {
		t.Errorf("json document %+v", doc)
	}

	// Neither A missing nor a CapacityPlan makes a table.
	if res := plugin(t, ns, "compare", "gone", "v2"); res.code != ExitError || !strings.Contains(res.stderr, "nothing to compare with") {
		t.Errorf("missing A: exit %d, stderr %q", res.code, res.stderr)
	}
	finishedPlan(t, ns)
	for _, args := range [][]string{{"compare", "bench-6", "v2"}, {"compare", "v1", "cp/bench-6"}, {"compare", "tr/v1", "bench-6"}} {
		if res := plugin(t, ns, args...); res.code != ExitError || !strings.Contains(res.stderr, "not one of each") {
			t.Errorf("%v: exit %d, stderr %q", args, res.code, res.stderr)
		}
	}
}

// TestGetListsTheNamespace: get without a name lists the TestRuns (REGRESSED and the
// comparison's decision among their columns) and the CapacityPlans, as kubectl get does.
func TestGetListsTheNamespace(t *testing.T) {
	ns := namespace(t)
	if res := plugin(t, ns, "get"); res.code != 0 || strings.TrimSpace(res.stdout) != "No TestRuns or CapacityPlans found in namespace "+ns+"." {
		t.Errorf("empty namespace: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	a := createRun(t, tw.MakeTestRun("v1", ns).Measured(v1alpha1.VerdictPassed))
	createRun(t, tw.MakeTestRun("v2", ns).Measured(v1alpha1.VerdictRegressed).Compared("v1", string(a.UID), tw.ThroughputDrop()))
	finishedPlan(t, ns)

	res := plugin(t, ns, "get")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	runs := tableRows(t, res.stdout, "NAME TYPE")
	if want := []string{"NAME", "TYPE", "PROFILE", "PHASE", "VERDICT", "COMPARED", "DROPPED%", "RPS", "P95", "AGE"}; !slices.Equal(runs[0], want) {
		t.Errorf("header %q, want %q", runs[0], want)
	}
	byName := map[string][]string{}
	for _, r := range runs[1:] {
		byName[r[0]] = r
	}
	if r := byName["v2"]; len(r) != 10 || r[4] != "REGRESSED" || r[5] != "Regressed" || r[7] != "4.66" {
		t.Errorf("v2: %q\n%s", r, res.stdout)
	}
	if r := byName["v1"]; len(r) != 10 || r[4] != "PASSED" || r[5] != "-" {
		t.Errorf("v1: %q", r)
	}
	// finishedPlan's two child runs are listed too: four runs.
	if len(runs) != 5 {
		t.Errorf("%d runs listed:\n%s", len(runs)-1, res.stdout)
	}
	plans := tableRows(t, res.stdout, "NAME PROFILES")
	if len(plans) != 2 || !slices.Equal(plans[1][:4], []string{"bench-6", "C1,C2", "4/4", "Succeeded"}) {
		t.Errorf("plans %q", plans)
	}
	if only := plugin(t, ns, "get", "--plan"); only.code != 0 || strings.Contains(only.stdout, "TestRuns:") || !strings.Contains(only.stdout, "bench-6") {
		t.Errorf("get --plan:\n%s", only.stdout)
	}
}

// TestGetShowsTheComparison: one run's get shows its comparison under its results.
func TestGetShowsTheComparison(t *testing.T) {
	ns := namespace(t)
	done := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC))
	w := tw.MakeTestRun("v2", ns).Measured(v1alpha1.VerdictRegressed).Compared("v1", "uid-1", tw.ThroughputDrop(), tw.MemoryTooFew())
	w.Status.Comparison.Baseline.Source, w.Status.Comparison.Baseline.CompletionTime = "Kept", &done
	createRun(t, w)
	res := plugin(t, ns, "get", "v2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, line := range []string{"Verdict: REGRESSED", "Baseline: v1 (Kept, completed 2026-01-02T03:04:00Z)",
		"Decision: Regressed: throughput 71.20 % of baseline"} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	rows := tableRows(t, res.stdout, "METRIC BASELINE")
	if len(rows) != 3 || !slices.Equal(rows[1][:6], []string{"throughput (req/s)", "200.00", "142.40", "71.20", "success ≥ 100 %, ok ≥ 80 %", "Regressed"}) {
		t.Errorf("comparison table %q\n%s", rows, res.stdout)
	}
	if strings.Index(res.stdout, "Comparison with the baseline") < strings.Index(res.stdout, "Throughput:") {
		t.Errorf("the comparison is not under the results:\n%s", res.stdout)
	}
}

// TestGetShowsTheReferenceAndTheTrend: a run held against a fixed reference shows that comparison too,
// after the baseline's, with the shape each was checked for.
func TestGetShowsTheReferenceAndTheTrend(t *testing.T) {
	ns := namespace(t)
	w := tw.MakeTestRun("v3", ns).Measured(v1alpha1.VerdictRegressed).Compared("v2", "uid-2", tw.LatencyWithin())
	w.Status.Comparison.Baseline.Shape = "type load, profile c1, load devices=400 period=10s duration=30s, script sha256:0123456789ab"
	ref := tw.MakeTestRun("v3", ns).Compared("v1", "uid-1", tw.ThroughputDrop()).Obj().Status.Comparison
	w.Status.ReferenceComparison = ref
	createRun(t, w)
	res := plugin(t, ns, "get", "v3")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, line := range []string{"Baseline: v2 (TestRun)", "Shape: type load, profile c1, load devices=400 period=10s duration=30s, script sha256:0123456789ab",
		"Reference: v1 (TestRun)", "Decision: Regressed: throughput 71.20 % of baseline"} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	if b, r := strings.Index(res.stdout, "Comparison with the baseline"), strings.Index(res.stdout, "Comparison with the fixed reference"); b < 0 || r < b {
		t.Errorf("the reference's comparison is not after the baseline's:\n%s", res.stdout)
	}
	// The trend, under the comparisons.
	setStatus(t, ns, "v3", func(s *v1alpha1.TestRunStatus) {
		s.Trend = &v1alpha1.TrendResult{Runs: 10, First: "v0", Last: "v3", Method: "E-Divisive means", Message: "1 change points within the last 5 of 10 runs, 1 for the worse",
			Shifts: []v1alpha1.TrendShift{{Metric: "latencyP95", Stat: "p95", Run: "v2", Before: "20.00", After: "30.00", ShiftPercent: "50.00", PValue: "0.0050", Direction: "worse"}}}
	})
	res = plugin(t, ns, "get", "v3")
	for _, line := range []string{"Runs: 10 (v0 … v3)", "Message: 1 change points within the last 5 of 10 runs, 1 for the worse"} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	if rows := tableRows(t, res.stdout, "METRIC FROM RUN"); len(rows) != 2 || !slices.Equal(rows[1], []string{"latencyP95 p95", "v2", "20.00", "30.00", "50.00", "0.0050", "worse"}) {
		t.Errorf("trend table %q\n%s", rows, res.stdout)
	}

	// JUnit: the reference's rows are cases of their own, and the run's failure names its worst.
	junit := plugin(t, ns, "report", "v3", "--format", "junit")
	for _, want := range []string{`name="reference: throughput (req/s)" classname="fleetbench.reference.v3"`, "worst against the fixed reference: throughput 71.20 % of baseline"} {
		if !strings.Contains(junit.stdout, want) {
			t.Errorf("junit does not say %q:\n%s", want, junit.stdout)
		}
	}
}

// TestJUnitComparison: a testcase per compared metric, read back from the XML: Regressed fails
// with the row's numbers, TooFewSamples and NoData are skipped with their note, OK passes; the
// run's REGRESSED verdict fails its own case, naming the worst metric.
func TestJUnitComparison(t *testing.T) {
	ns := namespace(t)
	noData := v1alpha1.MetricComparison{Name: "http_req_duration{name:push}", Stat: "p95", Unit: "ms", Direction: v1alpha1.LowerIsBetter,
		Decision: v1alpha1.ComparisonNoData, Note: "the baseline has no such metric"}
	w := tw.MakeTestRun("v2", ns).Measured(v1alpha1.VerdictRegressed).
		Compared("v1", "uid-1", tw.ThroughputDrop(), tw.LatencyWithin(), tw.MemoryTooFew(), noData)
	w.Status.Reason, w.Status.Message = "Regressed", "throughput 71.20 % of baseline"
	createRun(t, w)
	res := plugin(t, ns, "report", "v2", "--format", "junit")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var doc struct {
		Skipped int `xml:"skipped,attr"`
		Suites  []struct {
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(res.stdout), &doc); err != nil || len(doc.Suites) != 1 {
		t.Fatalf("%v (%d suites):\n%s", err, len(doc.Suites), res.stdout)
	}
	s := doc.Suites[0]
	var names []string
	for _, c := range s.Cases {
		names = append(names, c.Name)
	}
	wantNames := []string{"comparison: throughput (req/s)", "comparison: latencyP95 (ms)", "comparison: targetMemory (MiB)",
		"comparison: http_req_duration{name:push} p95 (ms)", "v2"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("cases %q, want %q", names, wantNames)
	}
	if s.Failures != 2 || s.Skipped != 2 {
		t.Errorf("%d failures, %d skipped; want 2 (throughput, the run) and 2:\n%s", s.Failures, s.Skipped, res.stdout)
	}
	thr := s.Cases[0]
	if f := thr.Failure; f == nil || f.Type != "Regressed" || thr.Classname != "fleetbench.comparison.v2" ||
		f.Message != "throughput (req/s) Regressed: 71.20 % of baseline (200.00 → 142.40), band success ≥ 100 %, ok ≥ 80 %, 95 % CI [65.10, 77.30] %, p 0.0004" ||
		!strings.Contains(f.Text, "p-value: 0.0004") || !strings.Contains(f.Text, "Samples (baseline / this run): 30 / 30") {
		t.Errorf("throughput case: %+v", thr.Failure)
	}
	if c := s.Cases[1]; c.Failure != nil || c.Skipped != nil {
		t.Errorf("latency within the ok band is not a pass: %+v", c)
	}
	if c := s.Cases[2]; c.Skipped == nil || c.Skipped.Message != "TooFewSamples: 3 samples a side: a rank test needs 4 to reach p < 0.05" {
		t.Errorf("too few samples: %+v", c.Skipped)
	}
	if c := s.Cases[3]; c.Skipped == nil || c.Skipped.Message != "NoData: the baseline has no such metric" {
		t.Errorf("no data: %+v", c.Skipped)
	}
	if f := s.Cases[4].Failure; f == nil || f.Message != "verdict REGRESSED" || !strings.Contains(f.Text, "worst: throughput 71.20 % of baseline") {
		t.Errorf("run case: %+v", f)
	}
}
