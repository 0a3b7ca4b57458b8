package judge

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/capacity"
	"fleetbench.dev/fleetbench/pkg/judge/trend"
)

// FailOnLeak is spec.stability.leak.failOn's value that fails the run on a leak verdict.
const FailOnLeak = "leak"

// MemoryTrend is status.target.memory.trend of a stability run (type stability, or any run
// with spec.stability): the target's points during the load, [loadStart, loadEnd], fitted after
// the warm-up (pkg/judge/trend), projected to limitMiB (the profile's memory). The points are
// the timeline's, at most MaxTargetPoints whatever the run's length. Nil for other runs.
func MemoryTrend(points []TargetPoint, loadStart, loadEnd time.Time, spec *v1alpha1.TestRunSpec, limitMiB float64) *v1alpha1.MemoryTrend {
	if spec.Type != v1alpha1.TestTypeStability && spec.Stability == nil {
		return nil
	}
	o := leakOptions(spec, limitMiB)
	o.Start = loadStart
	var samples []trend.Sample
	// The fit is quadratic in its samples (Theil–Sen's pairs): its bound is kept here,
	// whoever calls, since the points come from a ConfigMap in the tenant's namespace.
	for _, p := range ThinTargetPoints(points) {
		if !p.At.Before(loadStart) && !p.At.After(loadEnd) {
			samples = append(samples, trend.Sample{At: p.At, MiB: p.MemoryMiB})
		}
	}
	return trendStatus(trend.Fit(samples, o))
}

// leakOptions are spec.stability.leak's warm-up and horizon, projected to limitMiB.
func leakOptions(spec *v1alpha1.TestRunSpec, limitMiB float64) trend.Options {
	o := trend.Options{LimitMiB: limitMiB}
	if st := spec.Stability; st != nil && st.Leak != nil {
		// Admission's pattern makes both parse; a value that does not is the default.
		o.WarmUp, _ = time.ParseDuration(string(st.Leak.WarmUp))
		o.Horizon, _ = time.ParseDuration(string(st.Leak.Horizon))
	}
	return o
}

// trendStatus writes a fit as status has it.
func trendStatus(r trend.Result) *v1alpha1.MemoryTrend {
	out := &v1alpha1.MemoryTrend{
		Verdict: r.Verdict, Samples: int32(r.Samples), WarmUpDetected: r.WarmUpDetected,
		WarmUpSeconds: int64(r.WarmUp.Seconds()), Horizon: r.Horizon.String(), Message: r.Message,
	}
	if r.Verdict == trend.Insufficient {
		return out
	}
	out.SlopeMiBPerHour, out.SlopeLow, out.SlopeHigh = num(r.Slope), num(r.Low), num(r.High)
	out.TheilSenMiBPerHour = num(r.TheilSen)
	out.FitStartMiB, out.FitEndMiB = num(r.StartMiB), num(r.EndMiB)
	end := metav1.NewTime(r.To)
	out.FitEnd = &end
	if r.HasProjection {
		out.ProjectedFullIn = r.FullIn.Round(time.Minute).String()
	}
	return out
}

// num writes a fitted figure; an unbounded interval (too few effective samples) is "-Inf"/"+Inf".
func num(v float64) string {
	switch {
	case v > 1e15:
		return "+Inf"
	case v < -1e15:
		return "-Inf"
	}
	return capacity.Format(v, 3)
}

// leakProblem is the failure a leak verdict makes when spec.stability.leak.failOn is leak: a
// leak whose projection reaches the profile's memory only beyond the horizon is reported (the
// verdict says leak) but fails nothing.
func leakProblem(t *v1alpha1.TargetUsage, st *v1alpha1.StabilitySpec) (string, bool) {
	if st.Leak == nil || st.Leak.FailOn != FailOnLeak || t.Memory == nil || t.Memory.Trend == nil || t.Memory.Trend.Verdict != trend.Leak ||
		beyondHorizon(t.Memory.Trend) {
		return "", false
	}
	tr := t.Memory.Trend
	return fmt.Sprintf("target memory leaks %s MiB/h (95%% CI %s to %s)%s (spec.stability.leak.failOn: leak)",
		tr.SlopeMiBPerHour, tr.SlopeLow, tr.SlopeHigh, fullIn(tr.ProjectedFullIn)), true
}

// beyondHorizon: the trend's projection reaches the limit after its horizon. Both are
// durations as trendStatus wrote them; one that does not parse (a status written around it)
// is not beyond, so a leak still fails.
func beyondHorizon(tr *v1alpha1.MemoryTrend) bool {
	full, err1 := time.ParseDuration(tr.ProjectedFullIn)
	horizon, err2 := time.ParseDuration(tr.Horizon)
	return err1 == nil && err2 == nil && full > horizon
}

func fullIn(d string) string {
	if d == "" {
		return ""
	}
	return ", reaching the profile's memory in " + d
}
