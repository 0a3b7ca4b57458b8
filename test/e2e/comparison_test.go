//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

// TestComparisonGatesARelease is a release pipeline's gate: the sample backend is measured at
// release v1, which its TTL deletes as soon as it ends; v2 (the same backend) is compared with
// v1's kept results through a label selector and is not REGRESSED (INCONCLUSIVE where a row could
// not be judged, PASSED where every row was); v3 holds each push twice as
// long and is REGRESSED against v2, naming latency, with Ready False so kubectl wait, Argo CD
// and Flux stop there. (A regression must be significantly beyond the 120 % edge: 30 % longer
// pushes measured p95 120.93 %, CI [104, 130], which is not.)
func TestComparisonGatesARelease(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-compare")

	v1 := releaseRun(ns, "v1", "20ms", nil)
	v1.Spec.TTLSecondsAfterFinished = ptr.To[int32](5) // gone before v2 starts, after the test saw it end
	got := e.run(t, v1, 4*time.Minute)
	requirePassed(t, got)
	e.waitGone(t, v1.DeepCopy(), time.Minute)

	v2 := releaseRun(ns, "v2", "20ms", &v1alpha1.BaselineSpec{
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"test": "ingest", "release": "v1"}}})
	got = e.run(t, v2, 4*time.Minute)
	c := got.Status.Comparison
	logComparison(t, "v2 against v1", c) // before the verdict's check, so a failure shows why
	if c == nil {
		t.Fatal("v2 has no comparison")
	}
	// What the comparison could not judge (a 30-second run's target memory often has too few
	// windows for its autocorrelation) is never passed: INCONCLUSIVE, naming the rows, under the
	// default spec.baseline.onUndecided; with every row decided, PASSED.
	if undecided := compare.Undecided(*c); len(undecided) > 0 {
		if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Verdict != v1alpha1.VerdictInconclusive ||
			!strings.Contains(got.Status.Message, "could not judge") {
			t.Fatalf("v2 with %d rows not judged (%v) ended %s verdict %s: %s; want Succeeded INCONCLUSIVE naming them",
				len(undecided), undecided, got.Status.Phase, got.Status.Verdict, got.Status.Message)
		}
	} else {
		requirePassed(t, got)
	}
	if c == nil || c.Baseline == nil || c.Baseline.Name != "ingest-v1" || c.Baseline.Source != "Kept" {
		t.Fatalf("v2's comparison %+v: want v1's kept results (v1 was deleted by its TTL)", c)
	}
	if c.Decision == v1alpha1.ComparisonRegressed || len(c.Metrics) < 3 {
		t.Errorf("v2 (same backend) decided %s over %d metrics, want not Regressed over throughput, latency and the target", c.Decision, len(c.Metrics))
	}

	v3 := releaseRun(ns, "v3", "40ms", &v1alpha1.BaselineSpec{Name: "ingest-v2"})
	got = e.run(t, v3, 4*time.Minute)
	c = got.Status.Comparison
	logComparison(t, "v3 against v2", c)
	if got.Status.Phase != v1alpha1.PhaseSucceeded || got.Status.Verdict != v1alpha1.VerdictRegressed {
		t.Fatalf("v3 (pushes twice as long) ended %s verdict %s: %s; want Succeeded REGRESSED", got.Status.Phase, got.Status.Verdict, got.Status.Message)
	}
	if c == nil || c.Baseline == nil || c.Baseline.Name != "ingest-v2" || c.Baseline.Source != "TestRun" || !strings.HasPrefix(c.Worst, "latency") {
		t.Errorf("v3's comparison %+v: want v2 as the baseline and latency as the worst metric", c)
	}
	if ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse {
		t.Errorf("Ready = %+v, want False for a REGRESSED run", ready)
	}
	if stalled := meta.FindStatusCondition(got.Status.Conditions, "Stalled"); stalled == nil || stalled.Reason != v1alpha1.ReasonVerdictRegressed {
		t.Errorf("Stalled = %+v, want True VerdictRegressed", stalled)
	}
	var events eventsv1.EventList
	if err := e.c.List(e.ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	regressed := false
	for _, ev := range events.Items {
		regressed = regressed || (ev.Reason == "Regressed" && ev.Regarding.Name == v3.Name && strings.Contains(ev.Note, "latency"))
	}
	if !regressed {
		t.Errorf("no Regressed event naming latency for %s", v3.Name)
	}
}

// releaseRun is one release of the sample backend under a steady 40 pushes/s for 30 s: four
// push workers that each hold a push pushDelay, so the backend has room (200 pushes/s at 20 ms,
// 100 at 40 ms) and a slower push shows as latency, not as lost throughput.
func releaseRun(ns, release, pushDelay string, baseline *v1alpha1.BaselineSpec) *v1alpha1.TestRun {
	run := tw.MakeTestRun("ingest-"+release, ns).
		Components(v1alpha1.Component{Name: "app", Kind: v1alpha1.ComponentCustom, Image: "fleetbench/sut:dev",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			Env:   []corev1.EnvVar{{Name: "WORKERS", Value: "4"}, {Name: "PUSH_DELAY", Value: pushDelay}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 2},
		}).
		Devices(400, "10s").Duration("30s").
		Inline(pushDirect).Parallelism(2).
		Threshold("http_req_failed", "rate<0.01").
		Obj()
	run.Labels = map[string]string{"test": "ingest", "release": release}
	if baseline != nil {
		// The sample backend spends 12–22 millicores here, and that moved by 23 % and by 70 %
		// between two runs of one backend on a shared 2-core machine (CI; beside a scale
		// benchmark), beyond what the windows within a run show: this gate judges throughput and
		// latency, and CPU only if it more than quadruples.
		baseline.Metrics = []v1alpha1.ComparedMetric{{Name: "targetCPU", OKPercent: ptr.To[int32](400)}}
	}
	run.Spec.Baseline = baseline
	return run
}

func logComparison(t *testing.T, what string, c *v1alpha1.Comparison) {
	t.Helper()
	if c == nil {
		t.Logf("%s: no comparison", what)
		return
	}
	t.Logf("%s: %s, worst %q", what, c.Decision, c.Worst)
	for _, m := range c.Metrics {
		t.Logf("  %-12s %10s → %10s %s  %7s %%  CI [%s, %s]  p %s  n %d/%d  %s  %s", m.Name, m.Baseline, m.Current, m.Unit,
			m.RatioPercent, m.CILowPercent, m.CIHighPercent, m.PValue, m.BaselineSamples, m.CurrentSamples, m.Decision, m.Note)
	}
}
