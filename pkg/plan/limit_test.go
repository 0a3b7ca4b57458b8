package plan

import (
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestRowLimit: each row names what bound its child, strongest evidence first.
func TestRowLimit(t *testing.T) {
	bench := func() *tw.TestRunWrapper { return benchRun("C1", 1000) }
	peak := func(outcome, rule string) *tw.TestRunWrapper {
		w := benchRun("C1", 1000).Type(v1alpha1.TestTypePeak)
		w.Status.Peak = &v1alpha1.PeakResult{BreakingPoint: outcome, StopRule: rule, LastHeldDevices: 400}
		return w
	}
	oom := func(w *tw.TestRunWrapper) *tw.TestRunWrapper {
		w.Status.Target = &v1alpha1.TargetUsage{OOMKills: 1}
		return w
	}
	generator := func(w *tw.TestRunWrapper) *tw.TestRunWrapper { w.Status.GeneratorBound = true; return w }
	for _, tc := range []struct {
		name string
		run  *tw.TestRunWrapper
		want string
	}{
		{"generators that could not keep up win over everything", generator(oom(withCPU(bench(), "0.95", "1.00"))), v1alpha1.LimitGenerator},
		{"an OOM-killed target ran out of memory, even with busy cores", oom(withCPU(bench(), "0.90", "1.00")), v1alpha1.LimitMemory},
		{"cpu: average 0.80 per core is saturated", withCPU(bench(), "0.80", "0.85"), v1alpha1.LimitCPU},
		{"cpu: a peak of 0.95 per core is saturated", withCPU(bench(), "0.50", "0.95"), v1alpha1.LimitCPU},
		{"cpu: average 0.79 and peak 0.94 are not", withCPU(bench(), "0.79", "0.94"), v1alpha1.LimitTarget},
		{"cpu: malformed figures saturate nothing", withCPU(bench(), "lots", ""), v1alpha1.LimitTarget},
		{"cpu saturation is the cause behind a p95 stop rule", withCPU(peak(v1alpha1.PeakReached, "p95 812ms > 500ms"), "0.85", "0.99"), v1alpha1.LimitCPU},
		{"peak stopped by p95: latency", peak(v1alpha1.PeakReached, "p95 812ms > 500ms"), v1alpha1.LimitLatency},
		{"peak stopped by errors", peak(v1alpha1.PeakReached, "errors 7.10% > 5%"), v1alpha1.LimitErrors},
		{"peak stopped by dropped actions: errors", peak(v1alpha1.PeakReached, "dropped 3.00% > 1%"), v1alpha1.LimitErrors},
		{"peak where nothing completed: errors", peak(v1alpha1.PeakReached, "nothing completed during the step"), v1alpha1.LimitErrors},
		{"peak that held up to maxDevices: nothing named", peak(v1alpha1.PeakNotReached, ""), ""},
		{"benchmark below cpu and memory: the target itself", bench(), v1alpha1.LimitTarget},
		{"stability run: its load simply held", bench().Type(v1alpha1.TestTypeStability), ""},
		{"not Succeeded: nothing measured to the end", withCPU(bench(), "0.99", "1.00").Phase(v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerOOMKilled, ""), ""},
		{"still running", generator(bench()).Phase(v1alpha1.PhaseRunning, v1alpha1.ReasonRunning, ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RowLimit(tc.run.Obj()); got != tc.want {
				t.Errorf("RowLimit = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRowsCarryTheLimit: the table's rows name their child's limit; a cell without a child or
// whose profile is missing names none.
func TestRowsCarryTheLimit(t *testing.T) {
	spec := sizingSpec(1, []string{"1", "4"}, "C1")
	cells := Cells(spec)
	rows := Rows(spec, "plan", cells, []Child{{Run: withCPU(benchRun("C1", 1000), "0.90", "1.00").Obj()}, {ProfileMissing: true}})
	if rows[0].Limit != v1alpha1.LimitCPU || rows[1].Limit != "" {
		t.Errorf("limits %q, %q; want cpu and none", rows[0].Limit, rows[1].Limit)
	}
}
