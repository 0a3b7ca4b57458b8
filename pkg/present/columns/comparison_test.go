package columns

import (
	"reflect"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestEveryComparedFieldHasAColumn: every field of the API's MetricComparison is shown by a
// comparison column, and every field a column names exists: a field added to status.comparison
// without a column, or a column left naming a renamed field, fails here.
func TestEveryComparedFieldHasAColumn(t *testing.T) {
	api := map[string]bool{}
	typ := reflect.TypeOf(v1alpha1.MetricComparison{})
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		api[name] = true
	}
	shown := map[string]string{}
	for _, c := range ComparisonColumns {
		for _, f := range c.Fields {
			if !api[f] {
				t.Errorf("column %q shows %q, which MetricComparison has not", c.ID, f)
			}
			if other, dup := shown[f]; dup {
				t.Errorf("columns %q and %q both show %q", other, c.ID, f)
			}
			shown[f] = c.ID
		}
	}
	for f := range api {
		if _, ok := shown[f]; !ok {
			t.Errorf("MetricComparison.%s is shown by no comparison column", f)
		}
	}
}

// TestComparisonColumnsAreNamedOnce: each renderer heads each comparison column, and no two
// under one name.
func TestComparisonColumnsAreNamedOnce(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range ComparisonColumns {
		if c.ID == "" || ids[c.ID] || c.Value == nil || c.Name == "" {
			t.Errorf("column %q: needs a distinct ID, a Name and a Value", c.ID)
		}
		ids[c.ID] = true
	}
	for _, r := range []Renderer{Table, JUnit, HTML} {
		seen := map[string]string{}
		for _, c := range ComparisonFor(r) {
			h := c.Header(r)
			if h == "" {
				t.Errorf("%s shows %q without a header", renderers[r], c.ID)
			}
			if other, dup := seen[h]; dup {
				t.Errorf("%s heads %q and %q both %q", renderers[r], other, c.ID, h)
			}
			seen[h] = c.ID
		}
	}
}

func TestComparisonCells(t *testing.T) {
	got := ComparisonRow{Metric: tw.ThroughputDrop(), Tested: true}.Cells(ComparisonColumns)
	want := map[string]string{CmpMetric: "throughput (req/s)", "baseline": "200.00", "current": "142.40", "ratioPercent": "71.20",
		"band": "success ≥ 100 %, ok ≥ 80 %", CmpDecision: "Regressed", "ci": "[65.10, 77.30] %", "pValue": "0.0004", "samples": "30 / 30", "note": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells\n got %q\nwant %q", got, want)
	}
	custom := v1alpha1.MetricComparison{Name: "http_req_duration{name:push}", Stat: "p95", Unit: "ms"}
	if got := metricLabel(ComparisonRow{Metric: custom}); got != "http_req_duration{name:push} p95 (ms)" {
		t.Errorf("metric label %q", got)
	}
}

// TestUntestedNeverRegressed: a row no test backs says which band it is in, never Regressed,
// which only a test of significance may say.
func TestUntestedNeverRegressed(t *testing.T) {
	for _, d := range []v1alpha1.ComparisonDecision{v1alpha1.ComparisonSuccess, v1alpha1.ComparisonOK, v1alpha1.ComparisonRegressed,
		v1alpha1.ComparisonNoData, v1alpha1.ComparisonTooFewSamples, ""} {
		got := decisionCell(ComparisonRow{Metric: v1alpha1.MetricComparison{Decision: d}})
		if strings.Contains(strings.ToLower(got), "regressed") || (d != v1alpha1.ComparisonNoData && !strings.Contains(got, "no test")) {
			t.Errorf("untested %q reads %q", d, got)
		}
		if tested := decisionCell(ComparisonRow{Metric: v1alpha1.MetricComparison{Decision: d}, Tested: true}); tested != string(d) {
			t.Errorf("tested %q reads %q", d, tested)
		}
	}
	if got := decisionCell(ComparisonRow{Metric: v1alpha1.MetricComparison{Decision: v1alpha1.ComparisonOK}}); got != "ok (no test)" {
		t.Errorf("untested OK reads %q", got)
	}
}
