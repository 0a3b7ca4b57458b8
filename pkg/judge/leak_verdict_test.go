package judge

import (
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// settledRunner is a runner of a load of minutes with 40 s windows: the measured settling curve
// (settlingMiB, 20 minutes), then its last 10 minutes again for as long as the load lasts,
// plus perHour MiB an hour from the start.
func settledRunner(perHour float64, minutes int) measure.RunnerInfo {
	width := 40 * time.Second
	r := measure.RunnerInfo{Name: "r0", WindowNanos: int64(width), CPU: measure.CPU{MaxRSSBytes: 50 << 20}}
	first := runnerStart.UnixNano() / int64(width)
	for i := range minutes * 60 / 40 {
		mib := settlingMiB[min(i, 15+(i-15)%15)]
		mib += perHour * (time.Duration(i+1) * width).Hours()
		r.CPU.Windows = append(r.CPU.Windows, measure.CPUWindow{Key: first + int64(i), Seconds: 1, RSSBytes: int64(mib * (1 << 20))})
	}
	return r
}

// TestShortRunnerFitIsInsufficient: a run of about 13 to 25 minutes leaves a few minutes after
// a runner's 10-minute settling; so short a fit read a moderate leak (10 or 15 MiB/h) as
// stable. It must say insufficient; a long enough run is stable, or a leak.
func TestShortRunnerFitIsInsufficient(t *testing.T) {
	spec := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability, Stability: &v1alpha1.StabilitySpec{}}
	for _, tc := range []struct {
		name    string
		minutes int
		perHour float64
		verdict string
	}{
		{"17 minutes, 10 MiB/h", 17, 10, "insufficient"},
		{"17 minutes, 15 MiB/h", 17, 15, "insufficient"},
		{"25 minutes, flat", 25, 0, "insufficient"},
		{"50 minutes, flat", 50, 0, "stable"},
		{"60 minutes, 15 MiB/h", 60, 15, "leak"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &measure.Summary{Start: runnerStart, End: runnerStart.Add(time.Duration(tc.minutes) * time.Minute), Runners: []measure.RunnerInfo{settledRunner(tc.perHour, tc.minutes)}}
			tr := RunnersMemory(s, spec).Trend
			t.Logf("%s: %s", tr.Verdict, tr.Message)
			if tr.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s: %s", tr.Verdict, tc.verdict, tr.Message)
			}
		})
	}
}

// TestTargetLeakBeyondHorizon: 20 MiB/h that reaches the profile's 1 GiB only after a
// horizon of 1 hour is still a leak, with its projection; failOn: leak fails only a leak
// within the horizon.
func TestTargetLeakBeyondHorizon(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		horizon string
		fails   bool
	}{
		{"within the default horizon", "", true},
		{"beyond a horizon of 1 hour", "1h", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability,
				Stability: &v1alpha1.StabilitySpec{Leak: &v1alpha1.LeakSpec{Horizon: v1alpha1.Duration(tc.horizon), FailOn: FailOnLeak}}}
			tr := MemoryTrend(leakPoints(start, 20), start, start.Add(2*time.Hour), spec, 1024)
			t.Logf("%+v", *tr)
			if tr.Verdict != "leak" || tr.ProjectedFullIn == "" {
				t.Fatalf("verdict %s, projection %q: want a leak with its projection: %s", tr.Verdict, tr.ProjectedFullIn, tr.Message)
			}
			if d, err := time.ParseDuration(tr.ProjectedFullIn); err != nil || d < 20*time.Hour || d > 40*time.Hour {
				t.Errorf("projected full in %q, want about 30h: (1024 − 440 MiB) / 20 MiB/h", tr.ProjectedFullIn)
			}
			if strings.Contains(tr.Message, "beyond the horizon") == tc.fails {
				t.Errorf("message %q: beyond the horizon %v", tr.Message, !tc.fails)
			}
			problems := TargetProblems(&v1alpha1.TargetUsage{Memory: &v1alpha1.MemoryUsage{Trend: tr}}, spec)
			if (len(problems) > 0) != tc.fails {
				t.Errorf("problems %q, want a failure: %v", problems, tc.fails)
			}
		})
	}
}
