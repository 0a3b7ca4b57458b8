package plan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// rep is one measured repetition of a cell.
type rep struct {
	mem    int64
	perDev string
	pushes string
	reqs   string
	safe   int64
}

// planWith is a plan named name whose table has, for each profile and WORKERS value, one row
// per repetition.
func planWith(name string, cells map[[2]string][]rep) *v1alpha1.CapacityPlan {
	p := &v1alpha1.CapacityPlan{}
	p.Name, p.Namespace, p.UID = name, "ns", types.UID("uid-"+name)
	// a fixed order: C1 then C2, WORKERS 1 then 2
	for _, prof := range []string{"C1", "C2"} {
		for _, w := range []string{"1", "2"} {
			for i, r := range cells[[2]string{prof, w}] {
				p.Status.Table = append(p.Status.Table, v1alpha1.CapacityRow{Profile: prof, Values: map[string]string{"WORKERS": w}, Repetition: int32(i + 1),
					Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed, MemoryPeakMiB: r.mem, MemoryPerDeviceMiB: r.perDev,
					PushesPerSecond: r.pushes, RequestsPerSecond: r.reqs, SafeMaxDevices: r.safe})
			}
		}
	}
	return p
}

// reps are n repetitions around pushes/s p (spread ±1 %), memory m MiB, safe s devices.
func reps(n int, p, m float64, s int64) []rep {
	out := make([]rep, n)
	for i := range out {
		f := 1 + 0.01*float64(i-n/2)/float64(n)
		out[i] = rep{mem: int64(m * f), perDev: fmt.Sprintf("%.3f", 0.013*f), pushes: fmt.Sprintf("%.2f", p*f), safe: int64(float64(s) * f)}
	}
	return out
}

func metric(c v1alpha1.CellComparison, name string) v1alpha1.MetricComparison {
	for _, m := range c.Metrics {
		if m.Name == name {
			return m
		}
	}
	return v1alpha1.MetricComparison{Name: "absent " + name}
}

// TestComparePlans: cells are matched by profile (without case) and sweep values; each
// repetition is a sample; 2 a side give TooFewSamples with the ratio and band still shown; 5 a
// side and a 30 % pushes drop are Regressed and named as the worst.
func TestComparePlans(t *testing.T) {
	for _, tc := range []struct {
		name          string
		base, cur     map[[2]string][]rep
		wantDecision  v1alpha1.ComparisonDecision
		wantWorst     string
		check         func(t *testing.T, c v1alpha1.PlanComparison)
		wantInMessage string
	}{{
		name:         "2 repetitions a side: too few samples, ratio and band still shown",
		base:         map[[2]string][]rep{{"C1", "1"}: reps(2, 100, 50, 1000)},
		cur:          map[[2]string][]rep{{"C1", "1"}: reps(2, 70, 50, 1000)},
		wantDecision: v1alpha1.ComparisonTooFewSamples,
		check: func(t *testing.T, c v1alpha1.PlanComparison) {
			m := metric(c.Cells[0], "pushesPerSecond")
			if m.Decision != v1alpha1.ComparisonTooFewSamples || m.RatioPercent != "70.00" || m.Band != "success ≥ 100 %, ok ≥ 80 %" ||
				m.BaselineSamples != 2 || m.CurrentSamples != 2 || !strings.Contains(m.Note, "needs at least 4 a side") {
				t.Errorf("pushes row %+v", m)
			}
		},
		wantInMessage: "spec.repetitions: 4 or more",
	}, {
		name: "5 repetitions a side, pushes/s down 30 % in C2 WORKERS=2: regressed",
		base: map[[2]string][]rep{{"C1", "1"}: reps(5, 100, 50, 1000), {"C2", "2"}: reps(5, 200, 80, 2000)},
		cur:  map[[2]string][]rep{{"C1", "1"}: reps(5, 100, 50, 1000), {"C2", "2"}: reps(5, 140, 80, 2000)},
		// the worst names the cell
		wantDecision: v1alpha1.ComparisonRegressed, wantWorst: "C2 WORKERS=2 pushesPerSecond 70.00 % of baseline (ok ≥ 80 %), p 0.0040",
		check: func(t *testing.T, c v1alpha1.PlanComparison) {
			if len(c.Cells) != 2 || c.Cells[0].Decision != v1alpha1.ComparisonSuccess || c.Cells[1].Decision != v1alpha1.ComparisonRegressed {
				t.Fatalf("cells %+v", c.Cells)
			}
			var names []string
			for _, m := range c.Cells[1].Metrics {
				names = append(names, m.Name+" "+m.Unit+" "+string(m.Direction))
			}
			want := "memoryPeak MiB LowerIsBetter,memoryPerDevice KiB LowerIsBetter,pushesPerSecond pushes/s HigherIsBetter,safeMaxDevices devices HigherIsBetter"
			if got := strings.Join(names, ","); got != want {
				t.Errorf("metrics %s, want %s", got, want)
			}
			if m := metric(c.Cells[1], "memoryPerDevice"); m.Baseline != "13.31" || m.RatioPercent != "100.00" {
				t.Errorf("KiB per device row %+v", m)
			}
		},
	}, {
		name:         "memory up 10 % with 5 a side: ok, not regressed",
		base:         map[[2]string][]rep{{"C1", "1"}: reps(5, 100, 500, 1000)},
		cur:          map[[2]string][]rep{{"C1", "1"}: reps(5, 100, 550, 1000)},
		wantDecision: v1alpha1.ComparisonOK, wantWorst: "C1 WORKERS=1 memoryPeak 109.92 % of baseline (ok ≤ 120 %), p 0.0040",
	}, {
		name: "no pushes: req/s is compared; a profile's case does not matter; a cell the baseline lacks is NoData",
		base: map[[2]string][]rep{{"C1", "1"}: {{reqs: "100"}, {reqs: "101"}}},
		cur:  map[[2]string][]rep{{"C1", "1"}: {{reqs: "99"}, {reqs: "100"}}, {"C1", "2"}: {{reqs: "50"}}},
		check: func(t *testing.T, c v1alpha1.PlanComparison) {
			if m := metric(c.Cells[0], "throughput"); m.Unit != "req/s" || m.RatioPercent != "99.00" {
				t.Errorf("throughput row %+v", m)
			}
			if c.Cells[1].Decision != v1alpha1.ComparisonNoData || !strings.Contains(c.Cells[1].Metrics[0].Note, "no cell C1 WORKERS=2") {
				t.Errorf("unmatched cell %+v", c.Cells[1])
			}
		},
		wantDecision: v1alpha1.ComparisonTooFewSamples,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := planWith("v1", tc.base), planWith("v2", tc.cur)
			if strings.HasPrefix(tc.name, "no pushes") {
				for i := range base.Status.Table {
					base.Status.Table[i].Profile = "c1"
				}
			}
			c := ComparePlans(base, cur)
			if c.Decision != tc.wantDecision || c.Worst != tc.wantWorst {
				t.Errorf("decision %s worst %q, want %s %q\n%+v", c.Decision, c.Worst, tc.wantDecision, tc.wantWorst, c)
			}
			if c.Baseline == nil || c.Baseline.Name != "v1" || c.Baseline.UID != "uid-v1" || c.Method != PlanMethod {
				t.Errorf("baseline %+v method %q", c.Baseline, c.Method)
			}
			if !strings.Contains(c.Message, tc.wantInMessage) {
				t.Errorf("message %q lacks %q", c.Message, tc.wantInMessage)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
			if again := ComparePlans(base, cur); !reflect.DeepEqual(again, c) {
				t.Errorf("not deterministic")
			}
		})
	}
}

// TestComparePlansSkipsFailedRepetitions: a repetition whose child Failed is no sample.
func TestComparePlansSkipsFailedRepetitions(t *testing.T) {
	base := planWith("v1", map[[2]string][]rep{{"C1", "1"}: reps(4, 100, 50, 1000)})
	cur := planWith("v2", map[[2]string][]rep{{"C1", "1"}: reps(4, 100, 50, 1000)})
	cur.Status.Table[0].Phase, cur.Status.Table[0].PushesPerSecond = v1alpha1.PhaseFailed, "1.00"
	m := metric(ComparePlans(base, cur).Cells[0], "pushesPerSecond")
	if m.CurrentSamples != 3 || m.BaselineSamples != 4 {
		t.Errorf("samples %d / %d, want 4 / 3: the Failed repetition counted", m.BaselineSamples, m.CurrentSamples)
	}
}

// TestBaselineStep: what a plan does about spec.baseline in each state of the two plans.
func TestBaselineStep(t *testing.T) {
	now := time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC)
	done := Decision{Phase: v1alpha1.PlanSucceeded, Reason: v1alpha1.ReasonPlanCompleted, Message: "all 4 cells done", Done: 4, Total: 4, AllMeasured: true}
	running := Decision{Phase: v1alpha1.PlanRunning, Reason: v1alpha1.ReasonRunningChildren, Done: 1, Total: 4, Create: []Cell{{Index: 1}}}
	good := planWith("v1", map[[2]string][]rep{{"C1", "1"}: reps(5, 100, 50, 1000)})
	good.Status.Phase = v1alpha1.PlanSucceeded
	slow := planWith("v1", map[[2]string][]rep{{"C1", "1"}: reps(5, 140, 50, 1000)})
	slow.Status.Phase = v1alpha1.PlanSucceeded
	inProgress := good.DeepCopy()
	inProgress.Status.Phase = v1alpha1.PlanRunning
	failed := good.DeepCopy()
	failed.Status.Phase, failed.Status.Reason = v1alpha1.PlanFailed, v1alpha1.ReasonChildFailed

	for _, tc := range []struct {
		name      string
		onMissing v1alpha1.BaselineOnMissing
		base      *v1alpha1.CapacityPlan
		d         Decision
		doneSince time.Time
		// wants
		phase, reason string
		write         bool
		regressed     bool
		deadline      bool
		create        int
		missing       string
	}{
		{name: "running, baseline there: nothing yet", base: good, d: running, phase: v1alpha1.PlanRunning, reason: v1alpha1.ReasonRunningChildren, create: 1},
		{name: "done, baseline Succeeded: compared once", base: good, d: done, phase: v1alpha1.PlanSucceeded, reason: v1alpha1.ReasonPlanCompleted, write: true},
		{name: "done, slower than a faster baseline: regressed", base: slow, d: done, phase: v1alpha1.PlanSucceeded, reason: v1alpha1.ReasonPlanCompleted, write: true, regressed: true},
		{name: "done, baseline running: waits with a deadline", base: inProgress, d: done, doneSince: now.Add(-time.Hour),
			phase: v1alpha1.PlanRunning, reason: v1alpha1.ReasonWaitingForBaseline, deadline: true},
		{name: "done, baseline running past the deadline: Fail", base: inProgress, d: done, doneSince: now.Add(-BaselineWait),
			phase: v1alpha1.PlanFailed, reason: v1alpha1.ReasonBaselineNotFound, write: true, missing: "still running"},
		{name: "missing at the start, Fail: no child starts", d: running, phase: v1alpha1.PlanFailed, reason: v1alpha1.ReasonBaselineNotFound,
			write: true, missing: "no CapacityPlan v1 in namespace ns"},
		{name: "missing at the start, Warn: runs, the baseline may still appear", onMissing: v1alpha1.BaselineMissingWarn, d: running,
			phase: v1alpha1.PlanRunning, reason: v1alpha1.ReasonRunningChildren, create: 1},
		{name: "missing at the end, Warn: the table without a comparison", onMissing: v1alpha1.BaselineMissingWarn, d: done,
			phase: v1alpha1.PlanSucceeded, reason: v1alpha1.ReasonPlanCompleted, write: true, missing: "no CapacityPlan v1"},
		{name: "baseline Failed, Fail", base: failed, d: done, phase: v1alpha1.PlanFailed, reason: v1alpha1.ReasonBaselineNotFound,
			write: true, missing: "ended Failed (ChildFailed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := planWith("v2", map[[2]string][]rep{{"C1", "1"}: reps(5, 100, 50, 1000)})
			cur.Spec.Baseline = &v1alpha1.PlanBaselineSpec{Name: "v1", OnMissing: v1alpha1.BaselineMissingFail}
			if tc.onMissing != "" {
				cur.Spec.Baseline.OnMissing = tc.onMissing
			}
			d, step := Baseline(cur, tc.base, tc.d, tc.doneSince, now)
			if d.Phase != tc.phase || d.Reason != tc.reason || (step.Write != nil) != tc.write || d.Regressed != tc.regressed ||
				step.Deadline.IsZero() == tc.deadline || len(d.Create) != tc.create || !strings.Contains(step.Missing, tc.missing) {
				t.Fatalf("decision %+v step %+v", d, step)
			}
			if tc.regressed && !strings.Contains(d.Message, "regressed against CapacityPlan v1: C1 WORKERS=1 pushesPerSecond") {
				t.Errorf("message %q", d.Message)
			}
			if step.Write == nil {
				return
			}
			// Written once: with the comparison in status, the next pass writes nothing and
			// keeps its consequence, whatever the baseline plan became since.
			cur.Status.Comparison = step.Write
			d2, step2 := Baseline(cur, nil, tc.d, tc.doneSince, now.Add(48*time.Hour))
			if step2.Write != nil || d2.Phase != d.Phase || d2.Reason != d.Reason || d2.Regressed != d.Regressed {
				t.Errorf("second pass: decision %+v step %+v, want %s/%s written nothing", d2, step2, d.Phase, d.Reason)
			}
		})
	}
}
