//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestBenchmarkPlanFillsTheSizingTable is seed 000's Bench-6 shape scaled down: a CapacityPlan
// over C1 × WORKERS 1 and 4, each child a benchmark of 40 devices pushing 10 times each through
// nginx to the device backend (each push holds a worker 20 ms). The children run one at a time;
// the table has a row per cell with exact accepted counts, and pushes per second grow with the
// workers, as seed 000's handler column does.
func TestBenchmarkPlanFillsTheSizingTable(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-plan")
	template := tw.MakeTestRun("t", ns).Type(v1alpha1.TestTypeBenchmark).
		Components(
			v1alpha1.Component{Name: "web", Kind: v1alpha1.ComponentWebServer, Env: []corev1.EnvVar{{Name: "PROXY_PASS", Value: "$(TARGET_APP_URL)"}}},
			sutComponent([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				corev1.EnvVar{Name: "WORKERS", Value: "16"}, corev1.EnvVar{Name: "PUSH_DELAY", Value: "20ms"})).
		Devices(40, "10s").Iterations(10).Inline(devicePush).Parallelism(2).Obj()
	plan := tw.MakeCapacityPlan("bench", ns, template, "C1").Sweep("app", "WORKERS", "1", "4").Obj()
	got := e.runPlan(t, plan, 6*time.Minute)
	if got.Status.Phase != v1alpha1.PlanSucceeded || got.Status.Progress != "2/2" || len(got.Status.Table) != 2 {
		t.Fatalf("plan %s %s with %d rows: %s", got.Status.Phase, got.Status.Progress, len(got.Status.Table), got.Status.Message)
	}
	var pushes []float64
	for _, row := range got.Status.Table {
		p95 := ""
		if row.Latency != nil {
			p95 = row.Latency.P95
		}
		t.Logf("row %s WORKERS=%s: %s/%s accepted %d dropped %s%% %s req/s, pushes/s %s, p95 %s, safe max %d devices",
			row.Profile, row.Values["WORKERS"], row.Phase, row.Verdict, row.RequestsAccepted, row.DroppedPercent, row.RequestsPerSecond,
			row.PushesPerSecond, p95, row.SafeMaxDevices)
		if row.Phase != v1alpha1.PhaseSucceeded || row.RequestsAccepted != 400 || row.SafeMaxDevices == 0 {
			t.Errorf("row %+v: want Succeeded with all 400 pushes accepted and a device count", row)
		}
		v, _ := strconv.ParseFloat(row.PushesPerSecond, 64)
		pushes = append(pushes, v)
	}
	// One worker holding each push 20 ms serves at most 50 a second; four serve more.
	if len(pushes) == 2 && (pushes[0] > 55 || pushes[1] <= pushes[0]) {
		t.Errorf("pushes per second %v: WORKERS 1 is bound near 50/s and WORKERS 4 must serve more", pushes)
	}
	if s := got.Status.Summary; len(s) != 1 || s[0].Passed != 2 || s[0].SafeMaxDevices == 0 {
		t.Errorf("summary %+v", s)
	}
}

// runPlan creates the plan and waits until it ends, logging each change of progress.
func (e *env) runPlan(t *testing.T, plan *v1alpha1.CapacityPlan, timeout time.Duration) *v1alpha1.CapacityPlan {
	t.Helper()
	if err := e.c.Create(e.ctx, plan); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.CapacityPlan{}
	start := time.Now()
	last := ""
	e.eventually(t, "the plan to complete", timeout, func() (bool, string) {
		if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(plan), got); err != nil {
			return false, err.Error()
		}
		if p := got.Status.Phase + " " + got.Status.Progress + " " + got.Status.Reason; p != last {
			t.Logf("%6.1fs  %s: %s", time.Since(start).Seconds(), p, got.Status.Message)
			last = p
		}
		return got.Status.Phase == v1alpha1.PlanSucceeded || got.Status.Phase == v1alpha1.PlanFailed, got.Status.Message
	})
	return got
}

// TestPlanComparedWithAnEarlierPlan is seed 000's "Comparison of some data with later versions"
// made by the operator: a plan of the device backend at C1, twice (repetitions 2, seed 001's
// 1st and 2nd run), then the same plan again, 4 times (admission's minimum for a compared
// plan), naming the first as its baseline. Its status gets the seed's table for the cell: memory
// peak, KiB per device, pushes/s and safe max devices as % of the first plan, each with seed
// 000's band; the baseline's 2 repetitions are too few for the rank test, which the rows say
// instead of deciding. A comparison that judged nothing is no pass: the plan ends
// Ready=False Inconclusive (spec.baseline.onUndecided's default), saying to run the baseline
// plan again with 4 repetitions or more.
func TestPlanComparedWithAnEarlierPlan(t *testing.T) {
	e := newEnv(t)
	ns := e.namespace(t, "e2e-plan-compare")
	template := tw.MakeTestRun("t", ns).Type(v1alpha1.TestTypeBenchmark).
		Components(sutComponent([]corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			corev1.EnvVar{Name: "WORKERS", Value: "4"}, corev1.EnvVar{Name: "PUSH_DELAY", Value: "20ms"})).
		Devices(40, "10s").Iterations(5).Inline(pushDirect).Parallelism(2).Obj()
	first := e.runPlan(t, tw.MakeCapacityPlan("release-v1", ns, template.DeepCopy(), "C1").Repetitions(2).Obj(), 5*time.Minute)
	if first.Status.Phase != v1alpha1.PlanSucceeded || len(first.Status.Table) != 2 {
		t.Fatalf("first plan %s with %d rows: %s", first.Status.Phase, len(first.Status.Table), first.Status.Message)
	}
	// A compared plan needs 4 repetitions (admission); the baseline plan's 2 are still too few.
	second := tw.MakeCapacityPlan("release-v2", ns, template.DeepCopy(), "C1").Repetitions(4).Obj()
	second.Spec.Baseline = &v1alpha1.PlanBaselineSpec{Name: "release-v1"}
	got := e.runPlan(t, second, 5*time.Minute)
	c := got.Status.Comparison
	if got.Status.Phase != v1alpha1.PlanSucceeded || c == nil || c.Baseline == nil || c.Baseline.Name != "release-v1" || len(c.Cells) != 1 {
		t.Fatalf("second plan %s: %s; comparison %+v, want one cell compared with release-v1", got.Status.Phase, got.Status.Message, c)
	}
	cell := c.Cells[0]
	t.Logf("%s %v: %s (%s)", cell.Profile, cell.Values, cell.Decision, c.Message)
	names := map[string]bool{}
	for _, m := range cell.Metrics {
		t.Logf("  %-16s %10s → %10s %-8s %7s %%  %-28s n %d/%d  %s  %s", m.Name, m.Baseline, m.Current, m.Unit, m.RatioPercent, m.Band,
			m.BaselineSamples, m.CurrentSamples, m.Decision, m.Note)
		names[m.Name] = true
		if m.RatioPercent == "" || m.Band == "" || m.BaselineSamples != 2 || m.CurrentSamples != 4 {
			t.Errorf("row %+v: want a ratio and a band over 2 repetitions against 4", m)
		}
		if m.Decision != v1alpha1.ComparisonTooFewSamples || m.Note == "" {
			t.Errorf("row %s decided %s (%q) on 2 repetitions against 4, want TooFewSamples saying why", m.Name, m.Decision, m.Note)
		}
	}
	if len(names) != 4 {
		t.Errorf("compared %v, want seed 000's four: memory peak, KiB per device, pushes/s, safe max devices", names)
	}
	if ready := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady); ready == nil || ready.Status != metav1.ConditionFalse ||
		ready.Reason != v1alpha1.ReasonInconclusive {
		t.Errorf("Ready %+v, want False Inconclusive: no cell was judged", ready)
	}
	if stalled := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionStalled); stalled == nil || stalled.Reason != v1alpha1.ReasonVerdictInconclusive {
		t.Errorf("Stalled %+v, want VerdictInconclusive", stalled)
	}
	const rerun = "the baseline plan release-v1 had 2 repetitions; a rank test needs at least 4 a side: run the baseline plan again with repetitions >= 4"
	if !strings.Contains(got.Status.Message, rerun) || c.Baseline.Repetitions != 2 {
		t.Errorf("message %q (baseline repetitions %d), want it to say %q", got.Status.Message, c.Baseline.Repetitions, rerun)
	}
}
