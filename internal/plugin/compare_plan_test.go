package plugin

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/plan"
)

// comparedPlan creates a C1 plan of 4 repetitions with pushes/s around pushes; with baseline
// set its status.comparison is made by pkg/plan against that plan, as the controller does.
func comparedPlan(t *testing.T, ns, name string, pushes float64, baseline *v1alpha1.CapacityPlan) *v1alpha1.CapacityPlan {
	t.Helper()
	p := tw.MakeCapacityPlan(name, ns, tw.MakeTestRun("t", ns).Obj(), "C1").Sweep("web", "WORKERS", "4").Repetitions(4).Obj()
	if baseline != nil {
		p.Spec.Baseline = &v1alpha1.PlanBaselineSpec{Name: baseline.Name}
	}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Status = v1alpha1.CapacityPlanStatus{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Progress: "4/4"}
	for i := range 4 {
		f := 1 + 0.01*float64(i-2)
		p.Status.Table = append(p.Status.Table, v1alpha1.CapacityRow{Profile: "C1", Values: map[string]string{"WORKERS": "4"}, Repetition: int32(i + 1),
			TestRun: fmt.Sprintf("%s-c1-%d", name, i), Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed,
			PushesPerSecond: fmt.Sprintf("%.2f", pushes*f), MemoryPeakMiB: 57, SafeMaxDevices: int64(10 * pushes * f)})
	}
	if baseline != nil {
		c := plan.ComparePlans(baseline, p)
		p.Status.Comparison = &c
	}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestComparePlans: B naming A prints B's status.comparison with a CELL column (the rank test
// over 4 repetitions a side: Regressed), as a table and as JSON, also once A is deleted; two
// plans without that link are set side by side from their tables, without a test.
func TestComparePlans(t *testing.T) {
	ns := namespace(t)
	a := comparedPlan(t, ns, "v1", 100, nil)
	comparedPlan(t, ns, "v2", 70, a)
	comparedPlan(t, ns, "v3", 95, nil)

	res := plugin(t, ns, "compare", "cp/v1", "cp/v2")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	rows := tableRows(t, res.stdout, "CELL METRIC")
	wantHead := []string{"CELL", "METRIC", "BASELINE", "CURRENT", "% OF PREVIOUS", "BAND", "DECISION", "95% CI", "P-VALUE", "SAMPLES", "NOTE"}
	if len(rows) != 5 || !slices.Equal(rows[0], wantHead) {
		t.Fatalf("table %q\n%s", rows, res.stdout)
	}
	pushes := rows[3]
	if pushes[0] != "C1 WORKERS=4" || pushes[1] != "pushesPerSecond (pushes/s)" || pushes[2] != "99.50" || pushes[3] != "69.65" ||
		pushes[4] != "70.00" || pushes[6] != "Regressed" || pushes[9] != "4 / 4" {
		t.Errorf("pushes row %q", pushes)
	}
	for _, line := range []string{"Baseline (A): v1", "This plan (B): v2", "Decision: Regressed: C1 WORKERS=4 pushesPerSecond 70.00 % of baseline (ok ≥ 80 %), p 0.0143"} {
		if !slices.Contains(normLines(res.stdout), line) {
			t.Errorf("no line %q in:\n%s", line, res.stdout)
		}
	}
	js := plugin(t, ns, "compare", "v1", "v2", "-o", "json")
	var doc CompareDocument
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, js.stdout)
	}
	if doc.Kind != ComparePlanKind || !doc.Tested || doc.PlanComparison == nil || len(doc.Rows) != 4 || doc.Rows[2]["cell"] != "C1 WORKERS=4" ||
		doc.Rows[2]["decision"] != "Regressed" {
		t.Errorf("json document %+v", doc)
	}

	// Side by side: v3 names no baseline; its means against v1's, no test, never Regressed.
	res = plugin(t, ns, "compare", "v1", "v3")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	rows = tableRows(t, res.stdout, "CELL METRIC")
	if !slices.Equal(rows[0], []string{"CELL", "METRIC", "BASELINE", "CURRENT", "% OF PREVIOUS", "BAND", "DECISION", "NOTE"}) ||
		!slices.Equal(rows[3][:7], []string{"C1 WORKERS=4", "pushesPerSecond (pushes/s)", "99.50", "94.52", "95.00", "success ≥ 100 %, ok ≥ 80 %", "ok (no test)"}) {
		t.Errorf("side by side %q\n%s", rows, res.stdout)
	}
	if !strings.Contains(norm(res.stdout), "no significance test: v3 has no status.comparison with v1") || strings.Contains(res.stdout, "Regressed") {
		t.Errorf("side-by-side output:\n%s", res.stdout)
	}

	// A deleted: B's comparison still names it; a side by side with a missing plan is refused.
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if res := plugin(t, ns, "compare", "cp/v1", "cp/v2"); res.code != 0 || !strings.Contains(res.stdout, "69.65") {
		t.Errorf("after A's deletion: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if res := plugin(t, ns, "compare", "cp/v1", "cp/v3"); res.code != ExitError || !strings.Contains(res.stderr, "nothing to compare with") {
		t.Errorf("missing A: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestCompareRepetitions: `compare PLAN` is seed 001's 1st / 2nd table, each cell's first and
// second repetitions side by side, without a test; a plan of one repetition is refused.
func TestCompareRepetitions(t *testing.T) {
	ns := namespace(t)
	comparedPlan(t, ns, "v1", 100, nil)
	res := plugin(t, ns, "compare", "cp/v1")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	rows := tableRows(t, res.stdout, "CELL METRIC")
	// repetition 1 has 98 pushes/s, repetition 2 99
	if !slices.Equal(rows[0][:7], []string{"CELL", "METRIC", "1ST", "2ND", "% OF 1ST", "BAND", "DECISION"}) ||
		!slices.Equal(rows[3][:5], []string{"C1 WORKERS=4", "pushesPerSecond (pushes/s)", "98.00", "99.00", "101.02"}) {
		t.Errorf("table %q\n%s", rows, res.stdout)
	}
	if !slices.Contains(normLines(res.stdout), "1st: v1 (rep 1)") || strings.Contains(res.stdout, "Regressed") {
		t.Errorf("output:\n%s", res.stdout)
	}
	one := tw.MakeCapacityPlan("once", ns, tw.MakeTestRun("t", ns).Obj(), "C1").Obj()
	if err := env.Client.Create(ctx, one); err != nil {
		t.Fatal(err)
	}
	if res := plugin(t, ns, "compare", "once"); res.code != ExitError || !strings.Contains(res.stderr, "needs 2 or more") {
		t.Errorf("one repetition: exit %d, stderr %q", res.code, res.stderr)
	}
}
