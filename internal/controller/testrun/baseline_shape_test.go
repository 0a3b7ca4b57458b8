package testrun

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/naming"
)

// TestBaselineAtAnotherLoadIsRefused (issue 39): a baseline kept at 10 devices is another
// experiment for a run of 20: the run ends Failed BaselineMismatch before anything is
// provisioned, naming both loads and the fix (b9fbc85 compared them: throughput "200 %").
// Named in spec.baseline.allowDifferent, the difference is compared and said.
func TestBaselineAtAnotherLoadIsRefused(t *testing.T) {
	ns := setup(t)
	base := runThrough(t, compared("base", ns, nil, nil), 3000)
	if base.Status.ScriptDigest == "" || !strings.HasPrefix(base.Status.ScriptDigest, "sha256:") {
		t.Fatalf("status.scriptDigest %q, want the script's sha256", base.Status.ScriptDigest)
	}

	twice := func(name string, allow ...v1alpha1.ShapePart) *v1alpha1.TestRun {
		run := tw.MakeTestRun(name, ns).Parallelism(1).Devices(20, "10s").Duration("10s").Obj()
		run.Spec.Baseline = &v1alpha1.BaselineSpec{Name: "base", OnUndecided: v1alpha1.BaselineUndecidedPass, AllowDifferent: allow}
		return run
	}
	refused := twice("twice")
	create(t, refused)
	got := waitPhase(t, refused, v1alpha1.PhaseFailed, v1alpha1.ReasonBaselineMismatch)
	for _, want := range []string{"baseline base ran another experiment", `load "devices=20 period=10s duration=10s" here, "devices=10 period=10s duration=10s" in the baseline`, "allowDifferent"} {
		if !strings.Contains(got.Status.Message, want) {
			t.Errorf("message %q does not say %q", got.Status.Message, want)
		}
	}
	if got.Status.TargetNamespace != "" || got.Status.StartTime != nil {
		t.Errorf("a refused comparison provisioned: target namespace %q, start %v", got.Status.TargetNamespace, got.Status.StartTime)
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{naming.LabelTestRun: refused.Name}); err != nil || len(pods.Items) > 0 {
		t.Errorf("pods of the refused run: %d (%v)", len(pods.Items), err)
	}

	allowed := runThrough(t, twice("twice-allowed", v1alpha1.ShapeLoad), 6000)
	b := allowed.Status.Comparison.Baseline
	if allowed.Status.Phase != v1alpha1.PhaseSucceeded || b == nil || !strings.Contains(b.Shape, "devices=10") || !strings.Contains(b.Shape, "allowed: load") {
		t.Errorf("allowed: phase %s, baseline %+v; want it compared, its shape saying the load allowed", allowed.Status.Phase, b)
	}
}

// TestReferenceCatchesTheSlide (issue 39, the ratchet): throughput slides about 13 % a release.
// Each release is within the ok band of the one before (80 %) and PASSES, so by selector it
// becomes the next bar; the fixed reference, the oldest run that PASSED, does not move, and
// the third release, at 75 % of the first, is REGRESSED against it (b9fbc85: PASSED). The
// reference's kept record is marked so retention spares it.
func TestReferenceCatchesTheSlide(t *testing.T) {
	ns := setup(t)
	labels := map[string]string{"test": "slide"}
	gate := func() *v1alpha1.BaselineSpec {
		sel := &metav1.LabelSelector{MatchLabels: labels}
		return &v1alpha1.BaselineSpec{Selector: sel, OnMissing: v1alpha1.BaselineMissingWarn, OnUndecided: v1alpha1.BaselineUndecidedPass,
			Reference: &v1alpha1.BaselineReference{Selector: sel}}
	}
	v1 := runThrough(t, compared("v1", ns, labels, gate()), 3000)
	if v1.Status.Verdict != v1alpha1.VerdictPassed {
		t.Fatalf("v1, the first release: %s %s", v1.Status.Verdict, v1.Status.Message)
	}
	time.Sleep(1100 * time.Millisecond) // completion times are kept to the second
	v2 := runThrough(t, compared("v2", ns, labels, gate()), 2600)
	if c, ref := v2.Status.Comparison, v2.Status.ReferenceComparison; v2.Status.Verdict != v1alpha1.VerdictPassed || c == nil || c.Baseline == nil || c.Baseline.Name != "v1" ||
		ref == nil || ref.Baseline != nil || !strings.Contains(ref.Message, "is the baseline v1 itself") {
		t.Fatalf("v2 at 87 %%: verdict %s, comparison %+v, reference %+v; want PASSED against v1, which is also the reference",
			v2.Status.Verdict, c, v2.Status.ReferenceComparison)
	}
	time.Sleep(1100 * time.Millisecond)
	v3 := runThrough(t, compared("v3", ns, labels, gate()), 2250)
	c, ref := v3.Status.Comparison, v3.Status.ReferenceComparison
	if c == nil || c.Baseline == nil || c.Baseline.Name != "v2" || c.Decision == v1alpha1.ComparisonRegressed {
		t.Fatalf("v3 against its baseline: %+v; want v2, not Regressed (87 %% of it)", c)
	}
	if ref == nil || ref.Baseline == nil || ref.Baseline.Name != "v1" || ref.Decision != v1alpha1.ComparisonRegressed || !strings.Contains(ref.Worst, "throughput") {
		t.Fatalf("v3 against the reference: %+v; want v1, Regressed on throughput (75 %% of it)", ref)
	}
	if v3.Status.Verdict != v1alpha1.VerdictRegressed || !strings.Contains(v3.Status.Message, "regressed against the fixed reference v1") {
		t.Errorf("v3: verdict %s, message %q", v3.Status.Verdict, v3.Status.Message)
	}
	waitEvent(t, ns, "Regressed", "fixed reference v1", "throughput")
	var kept corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: naming.KeptResults("v1", string(v1.UID))}, &kept); err != nil ||
		kept.Annotations[naming.AnnotationKeptReference] != "true" {
		t.Errorf("v1's kept record (%v): annotations %v, want it marked as a reference", err, kept.Annotations)
	}
}
