package testrun

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// TestTrendNamesTheShift (issue 38, the trend across releases): nine kept runs of a test, the
// last four at two thirds of the first five's throughput, then a tenth with spec.trend: its
// status.trend names the change point at the sixth run, for the worse, and onShift Regressed
// makes it REGRESSED; with onShift Warn a run that passes says it and stays PASSED.
func TestTrendNamesTheShift(t *testing.T) {
	ns := setup(t)
	labels := map[string]string{"test": "trend"}
	release := func(i, requests int, trend *v1alpha1.TrendSpec) *v1alpha1.TestRun {
		run := compared(fmt.Sprint("r", i), ns, labels, nil)
		run.Spec.Trend = trend
		got := runThrough(t, run, requests)
		time.Sleep(1100 * time.Millisecond) // completion times are kept to the second: each run in its own
		return got
	}
	for i := 0; i < 9; i++ {
		requests := 3000
		if i >= 5 {
			requests = 2000
		}
		release(i, requests, nil)
	}
	gate := &v1alpha1.TrendSpec{Selector: metav1.LabelSelector{MatchLabels: labels}, LastRuns: 5, OnShift: v1alpha1.TrendShiftRegressed}
	got := release(9, 2000, gate)
	tr := got.Status.Trend
	if tr == nil || tr.Runs != 10 || tr.First != "r0" || tr.Last != "r9" {
		t.Fatalf("status.trend %+v, want the 10 runs r0…r9", tr)
	}
	var throughput *v1alpha1.TrendShift
	for i := range tr.Shifts {
		if tr.Shifts[i].Metric == "throughput" {
			throughput = &tr.Shifts[i]
		}
	}
	if throughput == nil || throughput.Run != "r5" || throughput.Direction != "worse" || !strings.HasPrefix(throughput.ShiftPercent, "-33.") {
		t.Fatalf("status.trend.shifts %+v, want throughput -33 %% from r5, for the worse", tr.Shifts)
	}
	if got.Status.Verdict != v1alpha1.VerdictRegressed || !strings.Contains(got.Status.Message, "shifted for the worse over its kept runs (status.trend): throughput") {
		t.Errorf("verdict %s, message %q; want REGRESSED naming the shift", got.Status.Verdict, got.Status.Message)
	}
	waitEvent(t, ns, "TrendShift", "throughput", "from r5")

	// Warn: the same trend seen from one run later, which passes and says it.
	gate.OnShift, gate.LastRuns = v1alpha1.TrendShiftWarn, 10
	warned := release(10, 2000, gate)
	if warned.Status.Verdict != v1alpha1.VerdictPassed || !strings.Contains(warned.Status.Message, "shifted for the worse over its kept runs") ||
		warned.Status.Trend == nil || warned.Status.Trend.Runs != 11 {
		t.Errorf("onShift Warn: verdict %s, message %q, trend %+v; want PASSED saying the shift over 11 runs", warned.Status.Verdict, warned.Status.Message, warned.Status.Trend)
	}
}
