package admission

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestOnUndecidedDefaultsToInconclusive: a comparison's undecided rows do not pass a run
// unless the spec says so (issue 39); the policy is one of three words.
func TestOnUndecidedDefaultsToInconclusive(t *testing.T) {
	ctx := context.Background()
	run := tw.MakeTestRun("undecided-default", ns).Obj()
	run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "previous"}
	if err := env.Client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, run) })
	var got v1alpha1.TestRun
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(run), &got); err != nil {
		t.Fatal(err)
	}
	if p := got.Spec.Baseline.OnUndecided; p != v1alpha1.BaselineUndecidedInconclusive {
		t.Errorf("spec.baseline.onUndecided defaulted to %q, want Inconclusive", p)
	}

	bad := tw.MakeTestRun("undecided-bad", ns).Obj()
	bad.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "previous", OnUndecided: "Warn"}
	if err := env.Client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "onUndecided") {
		t.Errorf("onUndecided: Warn: %v, want refused by the enum", err)
	}
}

// TestComparedPlanNeedsFourRepetitions: a plan compared with a baseline plan is tested over its
// repetitions by a one-sided rank test that cannot reach p < 0.05 with fewer than 4 a side, so
// its comparison would always pass: refused, saying how many are needed. The default of 1
// (b9fbc85: admitted) and 3 are refused; 4 is admitted, and so is 1 without a baseline.
func TestComparedPlanNeedsFourRepetitions(t *testing.T) {
	ctx := context.Background()
	plan := func(name string, reps int32, baseline bool) *v1alpha1.CapacityPlan {
		p := tw.MakeCapacityPlan(name, ns, tw.MakeTestRun("t", ns).Obj(), "C1").Obj()
		p.Spec.Repetitions = reps
		if baseline {
			p.Spec.Baseline = &v1alpha1.PlanBaselineSpec{Name: "plan-v1"}
		}
		return p
	}
	for _, reps := range []int32{0, 1, 3} { // 0: unset, the default 1
		err := env.Client.Create(ctx, plan("reps-refused", reps, true))
		if err == nil || !strings.Contains(err.Error(), "needs 4 repetitions a side to reach p < 0.05") ||
			!strings.Contains(err.Error(), "spec.repetitions: 4 or more") {
			t.Errorf("a compared plan of %d repetitions: %v, want refused saying 4 are needed", reps, err)
		}
	}
	for name, p := range map[string]*v1alpha1.CapacityPlan{"reps-four": plan("reps-four", 4, true), "reps-alone": plan("reps-alone", 1, false)} {
		if err := env.Client.Create(ctx, p); err != nil {
			t.Errorf("%s refused: %v", name, err)
			continue
		}
		_ = env.Client.Delete(ctx, p)
	}
}

// TestPlanOnUndecidedDefaultsToInconclusive: a CapacityPlan's spec.baseline.onUndecided is the
// TestRun's: Inconclusive unless set, one of three words.
func TestPlanOnUndecidedDefaultsToInconclusive(t *testing.T) {
	ctx := context.Background()
	plan := func(name string, policy v1alpha1.BaselineOnUndecided) *v1alpha1.CapacityPlan {
		p := tw.MakeCapacityPlan(name, ns, tw.MakeTestRun("t", ns).Obj(), "C1").Obj()
		p.Spec.Repetitions, p.Spec.Baseline = 4, &v1alpha1.PlanBaselineSpec{Name: "plan-v1", OnUndecided: policy}
		return p
	}
	p := plan("plan-undecided-default", "")
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, p) })
	if got := p.Spec.Baseline.OnUndecided; got != v1alpha1.BaselineUndecidedInconclusive {
		t.Errorf("spec.baseline.onUndecided defaulted to %q, want Inconclusive", got)
	}
	if err := env.Client.Create(ctx, plan("plan-undecided-bad", "Warn")); err == nil || !strings.Contains(err.Error(), "onUndecided") {
		t.Errorf("onUndecided: Warn: %v, want refused by the enum", err)
	}
}
