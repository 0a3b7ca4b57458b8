package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestMemoryBoundIsKeptAndUsed: status.summary keeps the memory bound whether or not it binds
// at the plan's period, and SizeOptions reads both bounds back, so the answer caps at it at
// every period (TestAnswerIsCappedByMemoryAtAnyPeriod). 760 by throughput as there.
func TestMemoryBoundIsKeptAndUsed(t *testing.T) {
	for _, tc := range []struct {
		perDevice   string
		memoryBound int64
		safeFleet   int64
	}{
		{"0.0625", 4953, 760}, // (409.6 − 100) / 0.0625
		{"0.5", 619, 619},     // (409.6 − 100) / 0.5
	} {
		spec := sizingSpec(3, []string{"4"}, "C1")
		in := inputOf(spec, ideals(map[string][]int64{"C1/4": {1000, 950, 1050}}, nil))
		in.Stability = []v1alpha1.TestRun{*stabilityRun("stab-c1", "C1", 300, tc.perDevice).Obj()}
		p := &v1alpha1.CapacityPlan{Spec: *spec}
		p.Status.Summary = Summarize(in)
		s := p.Status.Summary[0]
		if s.MemoryBound != tc.memoryBound || s.SafeFleet != tc.safeFleet || s.Floor.SafeMaxDevices != 760 {
			t.Errorf("%s MiB/device: memory bound %d, safe fleet %d, floor %d; want %d, %d, 760", tc.perDevice, s.MemoryBound, s.SafeFleet, s.Floor.SafeMaxDevices, tc.memoryBound, tc.safeFleet)
		}
		want := SizeOption{Profile: "C1", Cores: 1, MemoryGiB: 0.5, ThroughputSafe: 760, ThroughputLimit: v1alpha1.LimitTarget, MemorySafe: tc.memoryBound}
		if got := SizeOptions(p, sizes); len(got) != 1 || got[0] != want {
			t.Errorf("options %+v, want %+v", got, want)
		}
	}
}

// TestSizeOptionsBounds: what status says becomes the two bounds. A prediction keeps both; an
// OOM-killed floor (limit memory) caps as memory does and still shrinks at a shorter period; a
// status from before the bounds were kept has only the safe fleet, which stands in for the
// throughput bound (it is at most that) and, when memory bound it, is the memory bound too.
func TestSizeOptionsBounds(t *testing.T) {
	p := &v1alpha1.CapacityPlan{Status: v1alpha1.CapacityPlanStatus{
		Summary: []v1alpha1.ProfileSummary{
			{Profile: "oom", SafeFleet: 500, Limit: v1alpha1.LimitMemory, Floor: &v1alpha1.CellFigures{SafeMaxDevices: 500, Limit: v1alpha1.LimitMemory}},
			{Profile: "legacy-memory", SafeFleet: 100000, Limit: v1alpha1.LimitMemory},
		},
		Model: &v1alpha1.SizeModel{Predictions: []v1alpha1.SizePrediction{
			{Profile: "C3", SafeMaxDevices: 1438, ThroughputSafeMaxDevices: 2400, MemoryBound: 1438, Limit: v1alpha1.LimitMemory},
		}},
	}}
	got := SizeOptions(p, nil)
	want := []SizeOption{
		{Profile: "oom", ThroughputSafe: 500, ThroughputLimit: v1alpha1.LimitMemory, MemorySafe: 500},
		{Profile: "legacy-memory", ThroughputSafe: 100000, ThroughputLimit: v1alpha1.LimitMemory, MemorySafe: 100000},
		{Profile: "C3", ThroughputSafe: 2400, MemorySafe: 1438, Predicted: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	// The prediction at half the plan's period: 1200 by throughput, under its 1438 by memory.
	if safe, limit := got[2].SafeAt(time.Minute, 30*time.Second); safe != 1200 || limit != "" {
		t.Errorf("C3 at half the period: %d %q, want 1200 by throughput", safe, limit)
	}
	if safe, limit := got[0].SafeAt(time.Minute, 2*time.Minute); safe != 500 || limit != v1alpha1.LimitMemory {
		t.Errorf("an OOM-killed floor at twice the period: %d %q, want 500 by memory", safe, limit)
	}
}

// TestDroppedRepetitionsAreSaid: C1's WORKERS 1 passed twice (1000, 1050) and FAILED its
// thresholds once, at 700 ideal devices; WORKERS 4 FAILED twice and was OOM-killed once, so
// none of it passed. The ranges are of the 2 that passed: the summary says 4 of 6 are left
// out and why, that the one at 700 measured below the floor's low end, and that WORKERS 4 is
// in neither floor nor best. A repetition still waiting is not left out.
func TestDroppedRepetitionsAreSaid(t *testing.T) {
	spec := sizingSpec(3, []string{"1", "4"}, "C1")
	in := inputOf(spec, ideals(map[string][]int64{"C1/1": {1000, 700, 1050}, "C1/4": {3000, 3100, 2900}}, func(c Cell, w *tw.TestRunWrapper) {
		switch {
		case c.Values[0] == "4" && c.Repetition == 3:
			w.Phase(v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerOOMKilled, "").Verdict(v1alpha1.VerdictFailed)
		case c.Values[0] == "4" || c.Repetition == 2:
			w.Verdict(v1alpha1.VerdictFailed)
		}
	}))
	s := summaryOf(t, Summarize(in), "C1")
	want := "4 of 6 finished repetitions left out of the ranges, as only PASSED runs size a deployment: 3 FAILED, 1 Failed (RunnerOOMKilled); " +
		"WORKERS=1 repetition 2 (" + in.Rows[1].TestRun + ", FAILED) measured 700 ideal devices, below the floor's low end of 1000; " +
		"no repetition passed at WORKERS=4: not in floor or best"
	if s.DroppedRepetitions != want || s.Floor.Passed != 2 || s.Floor.IdealMaxDevices.Low != "1000" {
		t.Errorf("dropped %q\nwant    %q\n(floor of %d, low %s)", s.DroppedRepetitions, want, s.Floor.Passed, s.Floor.IdealMaxDevices.Low)
	}

	// Every repetition passed, or is still waiting: nothing is left out.
	in = inputOf(spec, ideals(map[string][]int64{"C1/1": {1000, 1050}}, nil))
	if s := summaryOf(t, Summarize(in), "C1"); s.DroppedRepetitions != "" {
		t.Errorf("dropped %q, want none", s.DroppedRepetitions)
	}
}

// TestEachSettingKeepsItsOwnNoise: the floor's noise is the floor's and the best's the
// best's, so a row showing one setting's range quotes its own; the profile's names the worse.
func TestEachSettingKeepsItsOwnNoise(t *testing.T) {
	in := inputOf(sizingSpec(3, []string{"1", "4"}, "C1"), ideals(map[string][]int64{"C1/1": {880, 1000, 1120}, "C1/4": {2000, 3000, 4200}}, nil))
	s := summaryOf(t, Summarize(in), "C1")
	// CV 12.0 %: ⌈(1.96 · 1.2533 · 0.12 / 0.05)²⌉ = 35; CV 35.9 %: 312.
	floor := "capacity varies 12.0 % (CV) over 3 repetitions, more than 10 %: about 35 repetitions would put the median within ±5 %"
	best := "capacity varies 35.9 % (CV) over 3 repetitions, more than 10 %: about 312 repetitions would put the median within ±5 %"
	if s.Floor.Noise != floor || s.Best.Noise != best || !strings.HasSuffix(s.Noise, best) {
		t.Errorf("floor %q\nbest %q\nprofile %q", s.Floor.Noise, s.Best.Noise, s.Noise)
	}
}
