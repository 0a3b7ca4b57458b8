package judge

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// leakPoints are a run's target points: one idle before the load, a 20-minute registration
// ramp to 400 MiB, then perMiBHour growth for 100 minutes, one point a minute with a
// deterministic ±2 MiB wobble, and one after the load that must not be fitted.
func leakPoints(start time.Time, perMiBHour float64) []TargetPoint {
	pts := []TargetPoint{{At: start.Add(-time.Second), MemoryMiB: 50}}
	for m := 0; m <= 120; m++ {
		h := float64(m) / 60
		mem := 100 + 300*min(h*3, 1) + perMiBHour*max(h-1.0/3, 0) + float64(m%5-2)
		pts = append(pts, TargetPoint{At: start.Add(time.Duration(m) * time.Minute), MemoryMiB: mem})
	}
	return append(pts, TargetPoint{At: start.Add(125 * time.Minute), MemoryMiB: 5000})
}

func TestMemoryTrend(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(120 * time.Minute)
	stability := func(leak *v1alpha1.LeakSpec) *v1alpha1.TestRunSpec {
		return &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability, Stability: &v1alpha1.StabilitySpec{Leak: leak}}
	}
	tests := []struct {
		name    string
		spec    *v1alpha1.TestRunSpec
		growth  float64
		verdict string
		warmUp  int64 // seconds; -1: not given, so the first half (an hour) is held out
		fails   bool
	}{
		{name: "a benchmark has no trend", spec: &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeBenchmark}},
		{name: "plateau", spec: stability(nil), verdict: "stable", warmUp: -1},
		{name: "20 MiB/h, reported only", spec: stability(nil), growth: 20, verdict: "leak", warmUp: -1},
		{name: "20 MiB/h, failOn leak", spec: stability(&v1alpha1.LeakSpec{FailOn: FailOnLeak}), growth: 20, verdict: "leak", warmUp: -1, fails: true},
		{name: "warm-up given", spec: stability(&v1alpha1.LeakSpec{WarmUp: "30m", FailOn: FailOnLeak}), growth: 20, verdict: "leak", warmUp: 1800, fails: true},
		{name: "horizon of 1h: the limit is further, a leak that fails nothing", spec: stability(&v1alpha1.LeakSpec{Horizon: "1h", FailOn: FailOnLeak}), growth: 20, verdict: "leak", warmUp: -1},
		{name: "warm-up longer than the run", spec: stability(&v1alpha1.LeakSpec{WarmUp: "115m", FailOn: FailOnLeak}), growth: 20, verdict: "insufficient", warmUp: 6900},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := MemoryTrend(leakPoints(start, tc.growth), start, end, tc.spec, 1024)
			if tc.verdict == "" {
				if tr != nil {
					t.Fatalf("trend %+v, want none", tr)
				}
				return
			}
			t.Logf("%+v", *tr)
			if tr.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s: %s", tr.Verdict, tc.verdict, tr.Message)
			}
			if tc.warmUp >= 0 && tr.WarmUpSeconds != tc.warmUp || tc.warmUp < 0 && (tr.WarmUpSeconds != 3600 || !tr.WarmUpDetected) {
				t.Errorf("warm-up %ds (detected %v), want %d", tr.WarmUpSeconds, tr.WarmUpDetected, tc.warmUp)
			}
			if tr.Verdict == "leak" && (tr.ProjectedFullIn == "" || tr.FitEnd == nil || !tr.FitEnd.Time.Equal(end)) {
				t.Errorf("a leak without its projection or fit end: %+v", tr)
			}
			problems := strings.Join(TargetProblems(&v1alpha1.TargetUsage{Memory: &v1alpha1.MemoryUsage{Trend: tr}}, tc.spec), "; ")
			if tc.fails != strings.Contains(problems, "target memory leaks "+tr.SlopeMiBPerHour+" MiB/h") {
				t.Errorf("fails %v, problems %q", tc.fails, problems)
			}
		})
	}
}

// TestMemoryTrendIsBounded: the points come from a ConfigMap in the tenant's namespace, which
// may hold tens of thousands; the fit (quadratic in its samples) sees at most MaxTargetPoints.
func TestMemoryTrendIsBounded(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var pts []TargetPoint
	for i := range 30000 {
		pts = append(pts, TargetPoint{At: start.Add(time.Duration(i) * 100 * time.Millisecond), MemoryMiB: 400 + float64(i%7)})
	}
	tr := MemoryTrend(pts, start, start.Add(time.Hour), &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability}, 4096)
	if tr == nil || tr.Samples == 0 || tr.Samples > MaxTargetPoints {
		t.Fatalf("trend %+v: want at most %d samples fitted", tr, MaxTargetPoints)
	}
}
