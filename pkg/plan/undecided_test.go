package plan

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestUndecidedCells: a plan compared with a baseline plan of fewer than 4 repetitions, or
// with a cell the baseline plan lacks, judged nothing in those cells; as a TestRun, it ends
// as spec.baseline.onUndecided says (INCONCLUSIVE by default, not PASSED: issue 39) and its
// message names the cells, why, and what to do. The written comparison keeps that outcome on
// every later pass, the baseline plan gone.
func TestUndecidedCells(t *testing.T) {
	const tooFew = "C1 WORKERS=1: memoryPeak TooFewSamples (1 vs 4 repetitions: a one-sided rank test cannot reach p < 0.05"
	const rerun = "the baseline plan v1 had 1 repetition; a rank test needs at least 4 a side: run the baseline plan again with repetitions >= 4"
	for _, tc := range []struct {
		name        string
		baseReps    int  // repetitions of the baseline plan
		planReps    int  // repetitions of the plan (0: 4)
		slower      bool // the plan's pushes/s and safe devices are 30 % down
		extraCell   bool // the plan has a cell C1 WORKERS=2 the baseline plan lacks
		onUndecided v1alpha1.BaselineOnUndecided
		verdict     v1alpha1.Verdict
		says, not   []string
	}{
		{name: "baseline of 1 repetition: INCONCLUSIVE by default", baseReps: 1, verdict: v1alpha1.VerdictInconclusive,
			says: []string{"compared with CapacityPlan v1: TooFewSamples; the comparison could not judge 1: " + tooFew,
				"not judged is not passed: " + rerun + " (spec.baseline.onUndecided: Pass accepts it)"}},
		{name: "onUndecided Inconclusive", baseReps: 1, onUndecided: v1alpha1.BaselineUndecidedInconclusive, verdict: v1alpha1.VerdictInconclusive,
			says: []string{tooFew, rerun}},
		{name: "onUndecided Fail", baseReps: 1, onUndecided: v1alpha1.BaselineUndecidedFail, verdict: v1alpha1.VerdictFailed,
			says: []string{tooFew, "failed as spec.baseline.onUndecided: Fail says: " + rerun}},
		{name: "onUndecided Pass still names the cells", baseReps: 1, onUndecided: v1alpha1.BaselineUndecidedPass, verdict: v1alpha1.VerdictPassed,
			says: []string{tooFew, "passed as spec.baseline.onUndecided: Pass says"}, not: []string{"not judged is not passed"}},
		{name: "baseline of 2 repetitions", baseReps: 2, verdict: v1alpha1.VerdictInconclusive,
			says: []string{"the baseline plan v1 had 2 repetitions; a rank test needs at least 4 a side"}},
		{name: "baseline of 4 repetitions: decided, PASSED", baseReps: 4, verdict: v1alpha1.VerdictPassed,
			says: []string{"compared with CapacityPlan v1: Success"}, not: []string{"could not judge"}},
		{name: "a cell the baseline plan lacks: NoData, named", baseReps: 4, extraCell: true, verdict: v1alpha1.VerdictInconclusive,
			says: []string{"could not judge 1: C1 WORKERS=2: memoryPeak NoData (the baseline plan has no cell C1 WORKERS=2)",
				"name a baseline plan of the same profiles and sweep values"},
			not: []string{"C1 WORKERS=1:", "had 4"}},
		// 6 a side: Holm's correction over the cell's 4 rows asks p < 0.0125, beyond what 4 a side
		// can give (1/70).
		{name: "a regression still wins", baseReps: 6, planReps: 6, slower: true, extraCell: true, verdict: v1alpha1.VerdictRegressed,
			says: []string{"regressed against CapacityPlan v1: C1 WORKERS=1"}, not: []string{"could not judge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC)
			base := planWith("v1", map[[2]string][]rep{{"C1", "1"}: reps(tc.baseReps, 100, 50, 1000)})
			base.Spec.Repetitions, base.Status.Phase = int32(tc.baseReps), v1alpha1.PlanSucceeded
			pushes := 100.0
			if tc.slower {
				pushes = 70
			}
			n := max(tc.planReps, 4)
			cells := map[[2]string][]rep{{"C1", "1"}: reps(n, pushes, 50, int64(10*pushes))}
			if tc.extraCell {
				cells[[2]string{"C1", "2"}] = reps(n, 100, 50, 1000)
			}
			cur := planWith("v2", cells)
			cur.Spec.Repetitions = int32(n)
			cur.Spec.Baseline = &v1alpha1.PlanBaselineSpec{Name: "v1", OnUndecided: tc.onUndecided}
			done := Decision{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Message: "all cells done", Done: n, Total: n, AllMeasured: true}

			d, step := Baseline(cur, base, done, now, now)
			if step.Write == nil || d.Phase != v1alpha1.PlanSucceeded || d.Reason != v1alpha1.ReasonPlanCompleted {
				t.Fatalf("decision %+v step %+v: want the comparison written and the plan Succeeded Completed", d, step)
			}
			check := func(pass string, d Decision) {
				t.Helper()
				if got := d.Verdict(); got != tc.verdict {
					t.Errorf("%s: verdict %s, want %s; message %q", pass, got, tc.verdict, d.Message)
				}
				for _, s := range tc.says {
					if !strings.Contains(d.Message, s) {
						t.Errorf("%s: message %q lacks %q", pass, d.Message, s)
					}
				}
				for _, s := range tc.not {
					if strings.Contains(d.Message, s) {
						t.Errorf("%s: message %q has %q", pass, d.Message, s)
					}
				}
			}
			check("first pass", d)
			cur.Status.Comparison = step.Write
			d2, _ := Baseline(cur, nil, done, now, now.Add(48*time.Hour))
			check("a later pass, the baseline plan gone", d2)
		})
	}
}

// TestUndecidedNamesFiveCells: the message names the first 5 undecided cells and counts the
// rest, each cut to a bound, so a plan of 256 cells of long sweep values fits status.message.
func TestUndecidedNamesFiveCells(t *testing.T) {
	long := strings.Repeat("x", 256)
	c := &v1alpha1.PlanComparison{Baseline: &v1alpha1.ComparedPlan{Name: "v1", Repetitions: 1}, Decision: v1alpha1.ComparisonTooFewSamples}
	for i := range 7 {
		c.Cells = append(c.Cells, v1alpha1.CellComparison{Profile: fmt.Sprintf("C%d", i+1),
			Values: map[string]string{"A": long, "B": long, "C": long, "D": long}, Decision: v1alpha1.ComparisonTooFewSamples})
	}
	c.Cells = append(c.Cells, v1alpha1.CellComparison{Profile: "C9", Decision: v1alpha1.ComparisonSuccess})
	cells := Undecided(c)
	if len(cells) != 7 || !strings.HasPrefix(cells[0], "C1 A=xxx") {
		t.Fatalf("Undecided = %d cells %q, want the 7 undecided ones", len(cells), cells)
	}
	d := undecided(Decision{AllMeasured: true}, "", c)
	if d.Verdict() != v1alpha1.VerdictInconclusive || !strings.Contains(d.Message, "; and 2 more (status.comparison.cells)") ||
		strings.Contains(d.Message, "C6 ") || len(d.Message) > 4096 {
		t.Errorf("verdict %s, message of %d bytes %q", d.Verdict(), len(d.Message), d.Message)
	}
}
