package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// TestSummarizeFloorAndBest: 3 repetitions of WORKERS 1 and 4 on C1. The floor is the setting
// with the lower median, the best the higher; each figure is its median with the min–max of 3
// runs and their CV; safe comes from the low end, not the median. C2's children all failed: its
// figures stay empty (shown as "—"), not 0.
func TestSummarizeFloorAndBest(t *testing.T) {
	spec := sizingSpec(3, []string{"1", "4"}, "C1", "C2")
	in := inputOf(spec, func(c Cell) Child {
		if c.Profile == "C2" {
			return Child{Run: run(v1alpha1.PhaseFailed, v1alpha1.VerdictFailed, v1alpha1.ReasonRunnerOOMKilled), TargetGone: true}
		}
		return ideals(map[string][]int64{
			// WORKERS 1: median 1000, min–max 950–1050; mean 1000, sd √((50²+0+50²)/2) = 50: CV 5.0 %.
			"C1/1": {1000, 950, 1050},
			// WORKERS 4: median 2800, min–max 2700–3200; mean 2900, sd √((200²+100²+300²)/2) =
			// √70000 = 264.6: CV 9.1 %.
			"C1/4": {2700, 3200, 2800},
		}, func(c Cell, w *tw.TestRunWrapper) {
			if c.Values[0] == "1" {
				withCPU(w, "0.85", "0.90") // one worker keeps the cores busy
			}
		})(c)
	})
	sums := Summarize(in)
	c1 := summaryOf(t, sums, "C1")

	wantFloor := &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 3,
		// pushes/s = ideal / 6: 166.67, 158.33, 175.00; mean 166.67, sd 8.33: CV 5.0 %.
		PushesPerSecond: &v1alpha1.FigureRange{Median: "166.67", Low: "158.33", High: "175.00", Interval: v1alpha1.IntervalMinMax, CVPercent: "5.0", N: 3},
		IdealMaxDevices: &v1alpha1.FigureRange{Median: "1000", Low: "950", High: "1050", Interval: v1alpha1.IntervalMinMax, CVPercent: "5.0", N: 3},
		// safe = floor(950 × 80 %) = 760: the low end, not the median (800).
		SafeMaxDevices: 760,
		Limit:          v1alpha1.LimitCPU,
	}
	if diff := cmp.Diff(wantFloor, c1.Floor); diff != "" {
		t.Errorf("floor (-want +got):\n%s", diff)
	}
	wantBest := &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "4"}, Passed: 3,
		// 450.00, 533.33, 466.67
		PushesPerSecond: &v1alpha1.FigureRange{Median: "466.67", Low: "450.00", High: "533.33", Interval: v1alpha1.IntervalMinMax, CVPercent: "9.1", N: 3},
		IdealMaxDevices: &v1alpha1.FigureRange{Median: "2800", Low: "2700", High: "3200", Interval: v1alpha1.IntervalMinMax, CVPercent: "9.1", N: 3},
		// floor(2700 × 80 %) = 2160
		SafeMaxDevices: 2160,
		// a benchmark that saturated neither cpu nor memory: the target itself
		Limit: v1alpha1.LimitTarget,
	}
	if diff := cmp.Diff(wantBest, c1.Best); diff != "" {
		t.Errorf("best (-want +got):\n%s", diff)
	}
	if c1.SafeFleet != 760 || c1.Limit != v1alpha1.LimitCPU || c1.LimitMessage != "cpu: the target's cores were saturated" {
		t.Errorf("safe fleet %d limit %q (%q); want 760, the floor's, cpu", c1.SafeFleet, c1.Limit, c1.LimitMessage)
	}
	// M/M/1 at 80 %: 1 / (1 − 0.8) = 5.0× the service time.
	for _, want := range []string{"the lowest of the floor's ideal devices over 3 repetitions (the unluckiest run)", "× 80 %", "5.0× its service time"} {
		if !strings.Contains(c1.SafeRule, want) {
			t.Errorf("safe rule %q does not say %q", c1.SafeRule, want)
		}
	}
	if c1.Noise != "" || c1.Scaling != nil {
		t.Errorf("noise %q scaling %+v: CV under 10 %% and 2 sweep values give neither", c1.Noise, c1.Scaling)
	}
	// seed 000's weakest-row columns are kept as they were
	if c1.Rows != 6 || c1.Passed != 6 || c1.IdealMaxDevices != 950 || c1.PushesPerSecond != "158.33" {
		t.Errorf("legacy columns rows %d passed %d ideal %d pushes %s", c1.Rows, c1.Passed, c1.IdealMaxDevices, c1.PushesPerSecond)
	}

	c2 := summaryOf(t, sums, "C2")
	wantC2 := v1alpha1.ProfileSummary{Profile: "C2", Rows: 6,
		DroppedRepetitions: "6 of 6 finished repetitions left out of the ranges, as only PASSED runs size a deployment: 6 Failed (RunnerOOMKilled)"}
	if diff := cmp.Diff(wantC2, c2); diff != "" {
		t.Errorf("a profile with no passing row has no figures, and says why (-want +got):\n%s", diff)
	}
}

// TestSummarizeRanges: the range of the median by repetitions: one run has none, 2 to 5 give
// min–max, 6 or more the order-statistic 95 % interval, whose low end sets safe (up to 8 runs
// the lowest run; TestSafeRuleSaysWhichRunTheLowEndIs).
func TestSummarizeRanges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ideals   []int64
		want     v1alpha1.FigureRange
		safe     int64
		ruleSays string
	}{{
		name:     "one run: a median alone",
		ideals:   []int64{1000},
		want:     v1alpha1.FigureRange{Median: "1000", Interval: v1alpha1.IntervalSingle, N: 1},
		safe:     800, // floor(1000 × 0.8)
		ruleSays: "its single run",
	}, {
		// sorted 900 950 1000 1010 1050 1100: median (1000+1010)/2 = 1005. With 6 runs the
		// interval is [x(1), x(6)], coverage 1 − 2·(1/2)⁶ = 96.875 %. Mean 1001.67, sd 70.83:
		// CV 7.1 %.
		name:     "6 runs: ci95 of the median, coverage 96.9 %",
		ideals:   []int64{1050, 900, 1010, 1100, 950, 1000},
		want:     v1alpha1.FigureRange{Median: "1005", Low: "900", High: "1100", Interval: v1alpha1.IntervalCI95, Coverage: "96.9", CVPercent: "7.1", N: 6},
		safe:     720, // floor(900 × 0.8)
		ruleSays: "the lowest of the floor's ideal devices over 6 repetitions (the unluckiest run)",
	}, {
		// 910…990 by 10: median 950. With 9 runs P(X ≤ 1) = 10/512 = 1.95 % ≤ 2.5 %, so the
		// interval is [x(2), x(8)] = [920, 980], coverage 1 − 2·10/512 = 96.1 %. Mean 950, sd
		// √(2·(40²+30²+20²+10²)/8) = 27.39: CV 2.9 %.
		name:     "9 runs: the interval drops the extremes",
		ideals:   []int64{990, 910, 980, 920, 970, 930, 960, 940, 950},
		want:     v1alpha1.FigureRange{Median: "950", Low: "920", High: "980", Interval: v1alpha1.IntervalCI95, Coverage: "96.1", CVPercent: "2.9", N: 9},
		safe:     736, // floor(920 × 0.8), not 910's 728
		ruleSays: "the median's lower 95 % bound of the floor's ideal devices (2nd lowest of 9 repetitions: 1 measured less)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := sizingSpec(int32(len(tc.ideals)), []string{"4"}, "C1")
			s := summaryOf(t, Summarize(inputOf(spec, ideals(map[string][]int64{"C1/4": tc.ideals}, nil))), "C1")
			if diff := cmp.Diff(&tc.want, s.Floor.IdealMaxDevices); diff != "" {
				t.Errorf("ideal devices (-want +got):\n%s", diff)
			}
			if s.Floor.SafeMaxDevices != tc.safe || s.SafeFleet != tc.safe {
				t.Errorf("safe %d, fleet %d; want %d", s.Floor.SafeMaxDevices, s.SafeFleet, tc.safe)
			}
			if s.Best != nil {
				t.Errorf("one setting: no best apart from the floor, got %+v", s.Best)
			}
			if !strings.Contains(s.SafeRule, tc.ruleSays) {
				t.Errorf("safe rule %q does not say %q", s.SafeRule, tc.ruleSays)
			}
		})
	}
}

// TestSummarizeNoise: a setting whose repetitions vary more than 10 % is flagged with the
// repetitions that would pin its median within ±5 %.
func TestSummarizeNoise(t *testing.T) {
	// 800, 1000, 1200: mean 1000, sd 200: CV 20.0 %. n = ⌈(1.96 · √(π/2) · 0.20 / 0.05)²⌉ =
	// ⌈3.8416 · 1.5708 · 16⌉ = ⌈96.55⌉ = 97.
	const want = "capacity varies 20.0 % (CV) over 3 repetitions, more than 10 %: about 97 repetitions would put the median within ±5 %"
	steady, noisy := []int64{1000, 990, 1010}, []int64{800, 1000, 1200}
	for _, tc := range []struct {
		name   string
		ideals map[string][]int64
		want   string
	}{
		{"steady", map[string][]int64{"C1/1": steady, "C1/4": {3000, 2990, 3010}}, ""},
		{"the floor is noisy", map[string][]int64{"C1/1": noisy, "C1/4": {3000, 2990, 3010}}, "the floor (WORKERS=1): " + want},
		// 2400, 3000, 3600: mean 3000, sd 600: CV 20.0 % as well.
		{"the best is noisy", map[string][]int64{"C1/1": steady, "C1/4": {2400, 3000, 3600}}, "the best setting (WORKERS=4): " + want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summaryOf(t, Summarize(inputOf(sizingSpec(3, []string{"1", "4"}, "C1"), ideals(tc.ideals, nil))), "C1")
			if s.Noise != tc.want {
				t.Errorf("noise %q, want %q", s.Noise, tc.want)
			}
		})
	}
}

// TestSummarizeWithoutDeviceModel: a run without a device model has throughput but no device
// counts: its devices, safe count and rule stay empty ("—"), not 0, and req/s orders the cells.
func TestSummarizeWithoutDeviceModel(t *testing.T) {
	spec := sizingSpec(1, []string{"1", "4"}, "C1")
	reqs := map[string]string{"1": "42.00", "4": "120.50"}
	in := inputOf(spec, func(c Cell) Child {
		r := tw.MakeTestRun("x", "ns").Type(v1alpha1.TestTypeBenchmark).Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "").
			Verdict(v1alpha1.VerdictPassed).Results(&v1alpha1.Results{Throughput: &v1alpha1.Throughput{RequestsPerSecond: reqs[c.Values[0]]}}).Obj()
		return Child{Run: r, TargetGone: true}
	})
	s := summaryOf(t, Summarize(in), "C1")
	want := &v1alpha1.CellFigures{Values: map[string]string{"WORKERS": "1"}, Passed: 1,
		PushesPerSecond: &v1alpha1.FigureRange{Median: "42.00", Interval: v1alpha1.IntervalSingle, N: 1}, Limit: v1alpha1.LimitTarget}
	if diff := cmp.Diff(want, s.Floor); diff != "" {
		t.Errorf("floor (-want +got):\n%s", diff)
	}
	if s.Best == nil || s.Best.PushesPerSecond.Median != "120.50" {
		t.Errorf("best %+v, want WORKERS 4 at 120.50 req/s", s.Best)
	}
	if s.SafeFleet != 0 || s.SafeRule != "" || s.Best.SafeMaxDevices != 0 {
		t.Errorf("safe fleet %d rule %q best safe %d: nothing to size devices with", s.SafeFleet, s.SafeRule, s.Best.SafeMaxDevices)
	}
}
