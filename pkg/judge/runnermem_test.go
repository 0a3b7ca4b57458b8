package judge

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

var runnerStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// runnerEnvelope is a runner of a 2-hour load with 2-minute windows (60, as a runner keeps):
// its memory ramps from 60 to 120 MiB over the first 20 minutes (VUs starting), then grows
// perHour MiB an hour, with a deterministic ±1 MiB wobble.
func runnerEnvelope(name string, perHour float64) measure.RunnerInfo {
	width := 2 * time.Minute
	r := measure.RunnerInfo{Name: name, WindowNanos: int64(width), CPU: measure.CPU{MaxRSSBytes: 300 << 20}}
	first := runnerStart.UnixNano() / int64(width)
	for i := range int64(60) {
		h := float64(i+1) * width.Hours()
		mib := 60 + 60*min(h*3, 1) + perHour*max(h-1.0/3, 0) + float64(i%3-1)
		r.CPU.Windows = append(r.CPU.Windows, measure.CPUWindow{Key: first + i, Seconds: 1, RSSBytes: int64(mib * (1 << 20))})
	}
	return r
}

func runnerSummary(runners ...measure.RunnerInfo) *measure.Summary {
	return &measure.Summary{Start: runnerStart, End: runnerStart.Add(2 * time.Hour), Runners: runners}
}

// TestRunnersMemory: each runner's own memory is fitted after its warm-up; the verdict is the
// worst runner's, and names it, so one leaking generator among stable ones is found and a
// fleet that only ramps up is stable. A run that is not a stability run has none.
func TestRunnersMemory(t *testing.T) {
	stability := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability, Stability: &v1alpha1.StabilitySpec{}}
	limited := stability.DeepCopy()
	limited.Runner = &v1alpha1.RunnerSpec{Resources: &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}}
	tests := []struct {
		name     string
		spec     *v1alpha1.TestRunSpec
		runners  []measure.RunnerInfo
		verdict  string
		runner   string
		leaking  int32
		fullIn   bool
		warnings bool
	}{
		{name: "a benchmark has none", spec: &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeBenchmark}, runners: []measure.RunnerInfo{runnerEnvelope("r0", 50)}},
		{name: "ramp then plateau", spec: stability, runners: []measure.RunnerInfo{runnerEnvelope("r0", 0), runnerEnvelope("r1", 0)}, verdict: "stable", runner: "r0"},
		{name: "one generator leaks", spec: stability,
			runners: []measure.RunnerInfo{runnerEnvelope("r0", 0), runnerEnvelope("r1", 40), runnerEnvelope("r2", 0)},
			verdict: "leak", runner: "r1", leaking: 1, warnings: true},
		{name: "the steeper leak is reported", spec: stability,
			runners: []measure.RunnerInfo{runnerEnvelope("r0", 20), runnerEnvelope("r1", 60)},
			verdict: "leak", runner: "r1", leaking: 2, warnings: true},
		{name: "projected to the runners' limit", spec: limited, runners: []measure.RunnerInfo{runnerEnvelope("r0", 40)},
			verdict: "leak", runner: "r0", leaking: 1, fullIn: true, warnings: true},
		{name: "an older runner without memory samples", spec: stability,
			runners: []measure.RunnerInfo{{Name: "old", WindowNanos: int64(time.Minute), CPU: measure.CPU{MaxRSSBytes: 100 << 20}}}, verdict: "insufficient", runner: "old"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := RunnersMemory(runnerSummary(tc.runners...), tc.spec)
			if tc.verdict == "" {
				if m != nil {
					t.Fatalf("runner memory %+v, want none", m)
				}
				return
			}
			tr := m.Trend
			t.Logf("%+v; %+v", *m, *tr)
			if tr.Verdict != tc.verdict || m.Runner != tc.runner || m.Leaking != tc.leaking || m.PeakMiB != tc.runners[0].CPU.MaxRSSBytes>>20 {
				t.Errorf("verdict %s of %s, %d leaking, peak %d MiB: want %s of %s, %d leaking", tr.Verdict, m.Runner, m.Leaking, m.PeakMiB, tc.verdict, tc.runner, tc.leaking)
			}
			if !strings.HasPrefix(tr.Message, "runner "+tc.runner+": ") {
				t.Errorf("message %q does not name the runner", tr.Message)
			}
			// The runner settles for 10 minutes; half of the 110 that follow are held out.
			if tc.verdict != "insufficient" && (tr.Samples != 28 || !tr.WarmUpDetected || tr.WarmUpSeconds != 65*60) {
				t.Errorf("%d samples after a warm-up of %ds (detected %v): want the 28 of the second half after 65 minutes", tr.Samples, tr.WarmUpSeconds, tr.WarmUpDetected)
			}
			if (tr.ProjectedFullIn != "") != tc.fullIn {
				t.Errorf("projection %q, want one: %v", tr.ProjectedFullIn, tc.fullIn)
			}
			w := RunnerLeakWarning(m)
			if (w != "") != tc.warnings || tc.warnings && (!strings.Contains(w, "not the target") || !strings.Contains(w, "runner "+tc.runner+" grows "+tr.SlopeMiBPerHour+" MiB/h")) {
				t.Errorf("warning %q, want one: %v", w, tc.warnings)
			}
			if s := RunnerMemoryPoints(runnerSummary(tc.runners...), m); tc.verdict != "insufficient" && (s == nil || s.Runner != tc.runner || len(s.Points) != 60) {
				t.Errorf("timeline series %+v, want the 60 points of %s", s, tc.runner)
			}
		})
	}
}

// TestRunnerMemoryIsBounded: a runner's envelope is the tenant's. Memory it cannot have (not
// positive, above 1 TiB) and windows far outside the load are not fitted, and a runner that
// sends far more windows than a runner keeps is thinned to maxRunnerPoints, so 5,000 runners
// cost the manager a bounded fit each.
func TestRunnerMemoryIsBounded(t *testing.T) {
	r := runnerEnvelope("liar", 0)
	bad := []measure.CPUWindow{{Key: r.CPU.Windows[0].Key - 1, RSSBytes: -5}, {Key: r.CPU.Windows[0].Key + 100000, RSSBytes: 1 << 30},
		{Key: 1 << 62, RSSBytes: 1 << 30}, {Key: r.CPU.Windows[5].Key, RSSBytes: 1 << 50}}
	r.CPU.Windows = append(bad, r.CPU.Windows...)
	s := runnerSummary(r)
	points := runnerPoints(s, &s.Runners[0])
	if len(points) != 60 {
		t.Fatalf("%d points, want the 60 honest ones", len(points))
	}
	for _, p := range points {
		if p.MiB < 50 || p.MiB > 130 || p.At.Before(s.Start) || p.At.After(s.End) {
			t.Errorf("point %+v is not one of the runner's", p)
		}
	}

	many := measure.RunnerInfo{Name: "many", WindowNanos: int64(time.Millisecond)}
	first := runnerStart.UnixNano() / int64(time.Millisecond)
	for i := range int64(100000) {
		many.CPU.Windows = append(many.CPU.Windows, measure.CPUWindow{Key: first + i*60, RSSBytes: 100 << 20})
	}
	s = runnerSummary(many)
	if n := len(runnerPoints(s, &s.Runners[0])); n > maxRunnerPoints || n < maxRunnerPoints/2 {
		t.Errorf("%d points kept of 100000, want at most %d", n, maxRunnerPoints)
	}
	m := RunnersMemory(s, &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability})
	if m.Trend.Verdict != "stable" {
		t.Errorf("flat memory thinned: %+v", *m.Trend)
	}
}
