package sidebyside

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/present/columns"
)

// run is a measured run with its whole-run values set.
func run(rps, p95, p99, perDevice, cpu string) *v1alpha1.TestRun {
	r := tw.MakeTestRun("r", "ns").Measured(v1alpha1.VerdictPassed).Obj()
	r.Status.Results.Throughput.RequestsPerSecond = rps
	r.Status.Results.Latency.P95, r.Status.Results.Latency.P99 = p95, p99
	r.Status.Target.Memory.PeakMiB, r.Status.Target.Memory.PerDeviceMiB = 100, perDevice
	r.Status.Target.CPU.AverageCoresPerCore = cpu
	return r
}

// cells are the rows in the table's columns, by metric: what the plugin prints.
func cells(rows []columns.ComparisonRow) map[string][]string {
	out := map[string][]string{}
	for _, r := range rows {
		c := r.Cells(columns.ComparisonColumns)
		out[c[columns.CmpMetric]] = []string{c["baseline"], c["current"], c["ratioPercent"], c["band"], c[columns.CmpDecision], c["ci"], c["pValue"], c["note"]}
	}
	return out
}

// TestSeed000Bands: the ratio of each whole-run value, judged by seed 000's rule at and just
// past each edge, lower-is-better for resources and latency, higher-is-better for throughput.
func TestSeed000Bands(t *testing.T) {
	a := run("200.00", "25.0ms", "1.00s", "0.125", "0.50")
	b := run("160.00", "30.0ms", "1.21s", "0.150", "0.40")
	lower, higher := "success ≤ 100 %, ok ≤ 120 %", "success ≥ 100 %, ok ≥ 80 %"
	want := map[string][]string{
		"throughput (req/s)":         {"200.00", "160.00", "80.00", higher, "ok (no test)", "", "", ""},
		"latencyP95 (ms)":            {"25", "30", "120.00", lower, "ok (no test)", "", "", ""},
		"latencyP99 (ms)":            {"1000", "1210", "121.00", lower, "beyond ok band (no test)", "", "", ""},
		"targetMemory (MiB)":         {"100", "100", "100.00", lower, "success (no test)", "", "", ""},
		"memoryPerDevice (KiB)":      {"128.00", "153.60", "120.00", lower, "ok (no test)", "", "", ""},
		"targetCPU (cores per core)": {"0.50", "0.40", "80.00", lower, "success (no test)", "", "", ""},
	}
	if diff := cmp.Diff(want, cells(Rows(a, b))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Throughput just below 80 % is beyond the ok band; above 100 % is success.
	if got := cells(Rows(a, run("159.98", "25.0ms", "1.00s", "0.125", "0.50")))["throughput (req/s)"][4]; got != "beyond ok band (no test)" {
		t.Errorf("79.99 %% throughput: %q", got)
	}
	if got := cells(Rows(a, run("201.00", "25.0ms", "1.00s", "0.125", "0.50")))["throughput (req/s)"][4]; got != "success (no test)" {
		t.Errorf("100.5 %% throughput: %q", got)
	}
}

// TestMissingValues: a metric one run lacks is no data with a note; one neither has is left
// out; a baseline of 0 has no ratio.
func TestMissingValues(t *testing.T) {
	a := run("0.00", "25.0ms", "", "", "0.50")
	b := run("10.00", "", "", "", "0.50")
	got := cells(Rows(a, b))
	if _, ok := got["latencyP99 (ms)"]; ok {
		t.Errorf("a metric neither run has is shown: %q", got)
	}
	if _, ok := got["memoryPerDevice (KiB)"]; ok {
		t.Errorf("a metric neither run has is shown: %q", got)
	}
	if r := got["latencyP95 (ms)"]; r[4] != "no data" || r[7] != "this run has no value" || r[2] != "" {
		t.Errorf("latency only in the baseline: %q", r)
	}
	if r := got["throughput (req/s)"]; r[4] != "no data" || r[2] != "" {
		t.Errorf("baseline throughput 0: %q", r)
	}
	bare := tw.MakeTestRun("bare", "ns").Obj()
	if rows := Rows(bare, bare); len(rows) != 0 {
		t.Errorf("two runs without results: %d rows", len(rows))
	}
}

// TestUntested: a tested row shown without its test keeps the values and the ratio, gets the
// band the ratio falls in, and drops what only a test gives (interval, p-value, samples).
func TestUntested(t *testing.T) {
	for _, tc := range []struct {
		in   v1alpha1.MetricComparison
		want v1alpha1.ComparisonDecision
	}{
		{v1alpha1.MetricComparison{Name: "pushesPerSecond", Direction: v1alpha1.HigherIsBetter, Baseline: "100.00", Current: "70.00", RatioPercent: "70.00",
			Decision: v1alpha1.ComparisonTooFewSamples, PValue: "0.1", CILowPercent: "60", BaselineSamples: 2, Note: "2 vs 2"}, v1alpha1.ComparisonRegressed},
		{v1alpha1.MetricComparison{Name: "memoryPeak", Direction: v1alpha1.LowerIsBetter, RatioPercent: "110.00", Decision: v1alpha1.ComparisonSuccess}, v1alpha1.ComparisonOK},
		{v1alpha1.MetricComparison{Name: "memoryPerDevice", Direction: v1alpha1.LowerIsBetter, Decision: v1alpha1.ComparisonNoData, Note: "in neither run"}, v1alpha1.ComparisonNoData},
	} {
		got := Untested(tc.in)
		m := got.Metric
		if got.Tested || m.Decision != tc.want || m.PValue != "" || m.CILowPercent != "" || m.BaselineSamples != 0 || m.RatioPercent != tc.in.RatioPercent ||
			(tc.want == v1alpha1.ComparisonNoData) != (m.Note != "") {
			t.Errorf("%s: %+v", tc.in.Name, got)
		}
	}
}
