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
