package judge

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/trend"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// The runners' own memory: each runner's envelope has its resident memory at each window
// (measure.CPUWindow.RSSBytes), read with the results, so the fit costs no API read however
// many runners there are. Each runner is fitted on its own: a generator's leak lives in one
// process (a VU's growing array, an extension's cache), and a replacement starts from scratch,
// so a fleet-wide maximum per window would jump between runners and fall at each replacement,
// which a straight line cannot tell from noise. The verdict is the worst runner's.

// maxRunnerPoints bounds the points fitted per runner: the fit is quadratic in them and a
// fleet has up to 5,000 runners. Runners keep at most measure.DefaultCollectorConfig.MaxWindows
// (60) windows; a runner that sends more (a hostile one) is thinned like the target's points.
const maxRunnerPoints = 64

// runnerSettle is the shortest warm-up of a runner's memory: its collector adds a window of
// aggregates every window until it holds MaxWindows, so its memory climbs for MaxWindows
// windows of the runner's first width (at most 10 s outside peak runs: 10 min) and is bounded
// after. Measured on loopback (hack/bench/BASELINES.md, "runners' memory"): a runner at
// 2.5 req/s grew 13.2 to 13.9 MiB anonymous from 5 to 10 min and 13.9 to 13.4 from 10 to
// 20 min; at 100 req/s it was flat from 5 min. A fit from the detected warm-up (VUs
// starting, some seconds) took that climb for a leak: 7.45 MiB/h over a 20-minute pod.
var runnerSettle = time.Duration(measure.DefaultCollectorConfig.MaxWindows) * measure.DefaultCollectorConfig.Window

// maxRunnerRSSBytes is more memory than any runner has: a larger value is a lie and dropped.
const maxRunnerRSSBytes = 1 << 40

// MemoryPoint is one sample of a process's resident memory.
type MemoryPoint struct {
	At  time.Time `json:"at"`
	MiB float64   `json:"mib"`
}

// RunnerMemorySeries is one runner's memory over the load, for the report's chart: the runner
// status.runners.memory.trend is of.
type RunnerMemorySeries struct {
	Runner string        `json:"runner"`
	Points []MemoryPoint `json:"points"`
}

// RunnersMemory is status.runners.memory of a stability run (as MemoryTrend gates it): the
// runners' peak RSS, and the worst runner's memory trend, judged with spec.stability.leak and
// projected to spec.runner.resources.limits.memory. Nil for other runs or without runners.
func RunnersMemory(s *measure.Summary, spec *v1alpha1.TestRunSpec) *v1alpha1.RunnerMemory {
	if spec.Type != v1alpha1.TestTypeStability && spec.Stability == nil || len(s.Runners) == 0 {
		return nil
	}
	o := leakOptions(spec, runnerLimitMiB(spec))
	o.MinWarmUp = runnerSettle
	out := &v1alpha1.RunnerMemory{}
	var worst *trend.Result
	for i := range s.Runners {
		r := &s.Runners[i]
		if r.CPU.MaxRSSBytes > 0 && r.CPU.MaxRSSBytes <= maxRunnerRSSBytes {
			out.PeakMiB = max(out.PeakMiB, r.CPU.MaxRSSBytes>>20)
		}
		points := runnerPoints(s, r)
		ro := o
		if len(points) > 0 {
			// A replacement's warm-up starts with it, not with the load.
			ro.Start = points[0].At.Add(-time.Duration(r.WindowNanos))
			if ro.Start.Before(s.Start) {
				ro.Start = s.Start
			}
		}
		fit := trend.Fit(samplesOf(points), ro)
		if fit.Verdict != trend.Insufficient {
			out.Fitted++
		}
		if fit.Verdict == trend.Leak {
			out.Leaking++
		}
		if worst == nil || worse(fit, *worst) {
			worst, out.Runner = &fit, r.Name
		}
	}
	out.Runner = cutText(out.Runner, 253)
	out.Trend = trendStatus(*worst)
	out.Trend.Message = cutText(fmt.Sprintf("runner %s: %s", out.Runner, worst.Message), 1024)
	return out
}

// worse says whether fit a is a worse runner than b: a leak before a stable fit before an
// insufficient one; among leaks or stable fits, the steeper slope; among insufficient ones,
// the more samples (the closest to a verdict).
func worse(a, b trend.Result) bool {
	rank := map[string]int{trend.Leak: 2, trend.Stable: 1}
	switch {
	case rank[a.Verdict] != rank[b.Verdict]:
		return rank[a.Verdict] > rank[b.Verdict]
	case a.Verdict == trend.Insufficient:
		return a.Samples > b.Samples
	}
	return a.Slope > b.Slope
}

// RunnerLeakWarning is the warning a leaking runner adds to results.warnings and to a Warning
// event; "" when no runner leaks. It names the generator so the leak is not blamed on the target.
func RunnerLeakWarning(m *v1alpha1.RunnerMemory) string {
	if m == nil || m.Trend == nil || m.Trend.Verdict != trend.Leak {
		return ""
	}
	tr := m.Trend
	return fmt.Sprintf("the load generator leaks memory, not the target: runner %s grows %s MiB/h (95%% CI %s to %s)%s; %d of %d runners fitted leak. "+
		"Look for state the script keeps growing (arrays or maps in a VU, a module's cache); a runner that reaches its limit is OOM-killed",
		m.Runner, tr.SlopeMiBPerHour, tr.SlopeLow, tr.SlopeHigh, limitIn(tr.ProjectedFullIn), m.Leaking, m.Fitted)
}

func limitIn(d string) string {
	if d == "" {
		return ""
	}
	return ", reaching its memory limit in " + d
}

// RunnerMemoryPoints is the named runner's memory over the load, for the timeline; nil when
// that runner has no memory samples.
func RunnerMemoryPoints(s *measure.Summary, m *v1alpha1.RunnerMemory) *RunnerMemorySeries {
	if m == nil || m.Runner == "" {
		return nil
	}
	for i := range s.Runners {
		if r := &s.Runners[i]; cutText(r.Name, 253) == m.Runner {
			if points := runnerPoints(s, r); len(points) > 0 {
				return &RunnerMemorySeries{Runner: m.Runner, Points: points}
			}
			return nil
		}
	}
	return nil
}

// runnerPoints are a runner's memory samples in time order, at most maxRunnerPoints: one per
// window that has one, at the window's end (its latest sample), within the load. Values a
// runner cannot have (not positive, above maxRunnerRSSBytes) are dropped: the envelope is the
// tenant's.
func runnerPoints(s *measure.Summary, r *measure.RunnerInfo) []MemoryPoint {
	width := r.WindowNanos
	if width <= 0 {
		return nil
	}
	from, to := s.Start.Add(-time.Duration(width)), s.End.Add(time.Duration(width))
	var out []MemoryPoint
	for _, w := range r.CPU.Windows {
		if w.RSSBytes <= 0 || w.RSSBytes > maxRunnerRSSBytes || w.Key > (1<<62)/width || w.Key < -(1<<62)/width {
			continue
		}
		at := time.Unix(0, (w.Key+1)*width)
		if at.Before(from) || at.After(to) {
			continue
		}
		if at.After(s.End) {
			at = s.End // the last window's latest sample was at most at the runner's end
		}
		out = append(out, MemoryPoint{At: at, MiB: float64(w.RSSBytes) / (1 << 20)})
	}
	slices.SortStableFunc(out, func(a, b MemoryPoint) int { return a.At.Compare(b.At) })
	out = slices.CompactFunc(out, func(a, b MemoryPoint) bool { return a.At.Equal(b.At) })
	return thinEvenly(out, maxRunnerPoints)
}

func samplesOf(points []MemoryPoint) []trend.Sample {
	out := make([]trend.Sample, len(points))
	for i, p := range points {
		out[i] = trend.Sample{At: p.At, MiB: p.MiB}
	}
	return out
}

// runnerLimitMiB is spec.runner.resources.limits.memory in MiB; 0 without one (the trend is
// then judged by its interval alone).
func runnerLimitMiB(spec *v1alpha1.TestRunSpec) float64 {
	if spec.Runner == nil || spec.Runner.Resources == nil {
		return 0
	}
	q, ok := spec.Runner.Resources.Limits[corev1.ResourceMemory]
	if !ok {
		return 0
	}
	return q.AsApproximateFloat64() / (1 << 20)
}

// cutText bounds a string a runner wrote to n bytes, at a rune boundary (statusbound.Cut would
// do, but statusbound's tests import this package).
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
