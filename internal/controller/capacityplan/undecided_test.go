package capacityplan

import (
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestPlanAgainstABaselinePlanOfOneRepetition: a baseline plan of 1 repetition (the default)
// gives the rank test 1 sample a side, so no cell is judged. Such a plan used to end Ready
// (issue 39); now it ends as spec.baseline.onUndecided says: by default (stored as
// Inconclusive) Ready=False Inconclusive, Stalled=True VerdictInconclusive; Fail
// VerdictFailed; Pass Ready. The message names the cell and says to run the baseline plan
// again with 4 repetitions or more; the phase stays Succeeded Completed, the table is whole.
func TestPlanAgainstABaselinePlanOfOneRepetition(t *testing.T) {
	ns := setup(t)
	v1 := tw.MakeCapacityPlan("plan-v1", ns, template(ns), "C1").Obj()
	create(t, v1)
	kids := waitChildren(t, v1, "plan-v1-c1-0")
	finish(t, kids["plan-v1-c1-0"], v1alpha1.PhaseSucceeded, v1alpha1.VerdictPassed, v1alpha1.ReasonCompleted, "100.00", 1000)
	waitPlan(t, v1, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted)

	const rerun = "the baseline plan plan-v1 had 1 repetition; a rank test needs at least 4 a side: run the baseline plan again with repetitions >= 4"
	for _, tc := range []struct {
		name           string
		policy         v1alpha1.BaselineOnUndecided
		ready, stalled string
		says           string
	}{
		{name: "v2", ready: "False/" + v1alpha1.ReasonInconclusive, stalled: "True/" + v1alpha1.ReasonVerdictInconclusive,
			says: "not judged is not passed: " + rerun},
		{name: "v2-fail", policy: v1alpha1.BaselineUndecidedFail, ready: "False/" + v1alpha1.ReasonFailed, stalled: "True/" + v1alpha1.ReasonVerdictFailed,
			says: "failed as spec.baseline.onUndecided: Fail says: " + rerun},
		{name: "v2-pass", policy: v1alpha1.BaselineUndecidedPass, ready: "True/" + v1alpha1.ReasonPassed, stalled: "False/" + v1alpha1.ReasonPassed,
			says: "passed as spec.baseline.onUndecided: Pass says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fourAtOnce(tc.name, ns, "plan-v1")
			p.Spec.Baseline.OnUndecided = tc.policy
			create(t, p)
			if tc.policy == "" && p.Spec.Baseline.OnUndecided != v1alpha1.BaselineUndecidedInconclusive {
				t.Errorf("spec.baseline.onUndecided defaulted to %q, want Inconclusive", p.Spec.Baseline.OnUndecided)
			}
			finishAll(t, p, 100, 1000)
			got := waitPlan(t, p, v1alpha1.PlanSucceeded, v1alpha1.ReasonPlanCompleted)
			c := got.Status.Comparison
			if c == nil || c.Baseline == nil || c.Baseline.Repetitions != 1 || c.Decision != v1alpha1.ComparisonTooFewSamples {
				t.Fatalf("comparison %+v", c)
			}
			if cond := condition(got, v1alpha1.ConditionReady); cond != tc.ready {
				t.Errorf("Ready = %s, want %s", cond, tc.ready)
			}
			if cond := condition(got, v1alpha1.ConditionStalled); cond != tc.stalled {
				t.Errorf("Stalled = %s, want %s", cond, tc.stalled)
			}
			if cond := condition(got, v1alpha1.ConditionComplete); cond != "True/"+v1alpha1.ReasonPlanCompleted {
				t.Errorf("Complete = %s", cond)
			}
			for _, want := range []string{"the comparison could not judge 1: C1: ", "TooFewSamples (1 vs 4 repetitions", tc.says} {
				if !strings.Contains(got.Status.Message, want) {
					t.Errorf("message %q lacks %q", got.Status.Message, want)
				}
			}
		})
	}
}
