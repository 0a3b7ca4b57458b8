package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// usl is X(N) = λN / (1 + σ(N−1) + κN(N−1)).
func usl(lambda, sigma, kappa, n float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

// near parses a status decimal and checks it within rel of want.
func near(t *testing.T, what, got string, want, rel float64) {
	t.Helper()
	v, err := strconv.ParseFloat(got, 64)
	if err != nil || math.Abs(v-want) > rel*math.Abs(want) {
		t.Errorf("%s = %q, want %g ± %g %%", what, got, want, 100*rel)
	}
}

// TestScalingFromPeakSteps: the USL is fitted to the steps of the profile's passing peak runs,
// N = devices. Steps from X = 0.2·N / (1 + 0.02(N−1) + 0.00001·N(N−1)) give σ, κ and λ back and
// the peak N = √((1 − 0.02) / 0.00001) = √98000 = 313, where X = 62.61 / 8.218 = 7.62 req/s.
func TestScalingFromPeakSteps(t *testing.T) {
	const lambda, sigma, kappa = 0.2, 0.02, 0.00001
	steps := func(f func(n float64) float64) []v1alpha1.PeakStepResult {
		var out []v1alpha1.PeakStepResult
		for _, n := range []int64{25, 50, 100, 200, 300, 400} {
			out = append(out, v1alpha1.PeakStepResult{Devices: n, RequestsPerSecond: fmt.Sprintf("%.4f", f(float64(n))), Held: n < 400})
		}
		return out
	}
	spec := sizingSpec(3, []string{"4"}, "C1")
	in := inputOf(spec, ideals(map[string][]int64{"C1/4": {1000, 1000, 1000}}, func(c Cell, w *tw.TestRunWrapper) {
		w.Type(v1alpha1.TestTypePeak)
		w.Status.Peak = &v1alpha1.PeakResult{BreakingPoint: v1alpha1.PeakReached, StopRule: "p95 812ms > 500ms", LastHeldDevices: 300,
			Steps: steps(func(n float64) float64 { return usl(lambda, sigma, kappa, n) })}
		if c.Repetition == 3 { // a failed run's steps say nothing about the target
			w.Phase(v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerOOMKilled, "")
			w.Status.Peak.Steps = steps(func(n float64) float64 { return 1000 / n })
		}
	}))
	s := summaryOf(t, Summarize(in), "C1")
	f := s.Scaling
	if f == nil {
		t.Fatal("no scaling fit")
	}
	// 2 passing runs × 6 steps
	if f.By != "devices (peak steps)" || f.Points != 12 || len(f.Measured) != 12 || !f.Trusted || len(f.Untrusted) != 0 {
		t.Errorf("by %q points %d measured %d trusted %v %v", f.By, f.Points, len(f.Measured), f.Trusted, f.Untrusted)
	}
	// X(25) = 5 / (1 + 0.48 + 0.006) = 3.36: measured points are sorted by N for the chart
	if m := f.Measured[0]; m.N != "25" || m.Throughput != "3.36" || f.Measured[11].N != "400" {
		t.Errorf("measured %+v … %+v", m, f.Measured[11])
	}
	near(t, "λ", f.Lambda.Value, lambda, 0.001)
	near(t, "σ", f.Sigma.Value, sigma, 0.001)
	near(t, "κ", f.Kappa.Value, kappa, 0.001)
	if f.Sigma.Low == "" || f.Sigma.High == "" || f.Kappa.Low == "" {
		t.Errorf("intervals σ %+v κ %+v: 12 points leave 9 degrees of freedom", f.Sigma, f.Kappa)
	}
	if f.PeakN != "313" {
		t.Errorf("peak N %q, want 313", f.PeakN)
	}
	near(t, "peak throughput", f.PeakThroughput, 7.62, 0.002)
	if s.Floor.Limit != v1alpha1.LimitLatency || s.Limit != v1alpha1.LimitLatency {
		t.Errorf("floor limit %q, profile limit %q: the p95 stop rule fired", s.Floor.Limit, s.Limit)
	}
}

// TestScalingWithoutAPassingClimb: a profile whose peak runs all ended INCONCLUSIVE (their
// generators were the limit) gets no fit, and the summary says which runs and why, instead of
// saying nothing.
func TestScalingWithoutAPassingClimb(t *testing.T) {
	spec := sizingSpec(1, []string{"4"}, "C1")
	in := inputOf(spec, ideals(map[string][]int64{"C1/4": {1000}}, func(_ Cell, w *tw.TestRunWrapper) {
		w.Type(v1alpha1.TestTypePeak).Verdict(v1alpha1.VerdictInconclusive)
		w.Status.Peak = &v1alpha1.PeakResult{Steps: []v1alpha1.PeakStepResult{{Devices: 10, RequestsPerSecond: "10"}}}
	}))
	f := summaryOf(t, Summarize(in), "C1").Scaling
	if f == nil || f.By != "devices (peak steps)" || f.Trusted || f.Points != 0 || len(f.Untrusted) != 1 ||
		!strings.Contains(f.Untrusted[0], "no peak run of this profile PASSED") || !strings.Contains(f.Untrusted[0], "Succeeded/INCONCLUSIVE") {
		t.Errorf("scaling %+v", f)
	}
}

// TestScalingFromSweep: without peak steps, a numeric sweep of at least 3 values is the load.
func TestScalingFromSweep(t *testing.T) {
	// λ = 100, σ = 0.1, κ = 0.01: X = 100, 178.57, 281.69, 353.98, 326.53 pushes/s at WORKERS
	// 1, 2, 4, 8, 16; peak N = √(0.9 / 0.01) = 9.49, X(9.49) = 948.7 / 2.654 = 357.5.
	pushes := func(c Cell, w *tw.TestRunWrapper) {
		n, _ := strconv.ParseFloat(c.Values[0], 64)
		w.Status.Capacity.PushesPerSecond = fmt.Sprintf("%.2f", usl(100, 0.1, 0.01, n))
	}
	five := map[string][]int64{"C1/1": {1, 1}, "C1/2": {1, 1}, "C1/4": {1, 1}, "C1/8": {1, 1}, "C1/16": {1, 1}}
	s := summaryOf(t, Summarize(inputOf(sizingSpec(2, []string{"1", "2", "4", "8", "16"}, "C1"), ideals(five, pushes))), "C1")
	f := s.Scaling
	if f == nil {
		t.Fatal("no scaling fit")
	}
	if f.By != "WORKERS" || f.Points != 10 || f.Measured[0].N != "1" || f.Measured[0].Throughput != "100.00" || f.Measured[9].N != "16" {
		t.Errorf("by %q points %d measured %+v", f.By, f.Points, f.Measured)
	}
	near(t, "σ", f.Sigma.Value, 0.1, 0.01)
	near(t, "κ", f.Kappa.Value, 0.01, 0.01)
	if f.PeakN != "9" || !f.Trusted {
		t.Errorf("peak N %q trusted %v %v; want 9, trusted", f.PeakN, f.Trusted, f.Untrusted)
	}
	near(t, "peak throughput", f.PeakThroughput, 357.5, 0.002)
	if f.ResidualStdErr == "" {
		t.Error("no residual error with 10 points")
	}

	// 3 values, one run each: a fit with no degrees of freedom, intervals left empty ("—").
	three := map[string][]int64{"C1/1": {1}, "C1/2": {1}, "C1/4": {1}}
	s = summaryOf(t, Summarize(inputOf(sizingSpec(1, []string{"1", "2", "4"}, "C1"), ideals(three, pushes))), "C1")
	if f := s.Scaling; f == nil || f.Points != 3 || f.Trusted || f.Sigma == nil || f.Sigma.Low != "" || f.Sigma.High != "" || f.ResidualStdErr != "" {
		t.Errorf("3-point fit %+v", f)
	} else if len(f.Untrusted) < 2 || f.Untrusted[0] != "only 3 load levels: a fit needs 1 low and at least 4 higher load levels" {
		t.Errorf("3-point fit untrusted %q", f.Untrusted)
	}

	// only WORKERS 1 passed: a fit was due but is impossible, and says why
	one := map[string][]int64{"C1/1": {1}}
	s = summaryOf(t, Summarize(inputOf(sizingSpec(1, []string{"1", "2", "4"}, "C1"), ideals(one, pushes))), "C1")
	if f := s.Scaling; f == nil || f.Points != 1 || f.Trusted || f.Lambda != nil || f.PeakN != "" || len(f.Untrusted) != 1 || f.Untrusted[0] != "USL fit needs at least 3 points, got 1" {
		t.Errorf("1-point fit %+v", f)
	}
}

// TestNoScaling: no load varies, so no fit: too few values, values that are not numbers, more
// than one dimension.
func TestNoScaling(t *testing.T) {
	mode := sizingSpec(1, nil, "C1")
	mode.Sweep = []v1alpha1.SweepDimension{{ScriptEnv: "MODE", Values: []string{"push", "pull", "mixed"}}}
	two := sizingSpec(1, []string{"1", "2", "4"}, "C1")
	two.Sweep = append(two.Sweep, v1alpha1.SweepDimension{ScriptEnv: "SSL", Values: []string{"on"}})
	zero := sizingSpec(1, []string{"0", "2", "4"}, "C1")
	for name, spec := range map[string]*v1alpha1.CapacityPlanSpec{
		"2 values":             sizingSpec(1, []string{"1", "4"}, "C1"),
		"values not numbers":   mode,
		"two dimensions":       two,
		"a value that is zero": zero,
	} {
		t.Run(name, func(t *testing.T) {
			in := inputOf(spec, func(c Cell) Child {
				return Child{Run: benchRun("C1", 1000+100*int64(c.Index)).Obj(), TargetGone: true}
			})
			if s := summaryOf(t, Summarize(in), "C1"); s.Scaling != nil {
				t.Errorf("scaling %+v, want none", s.Scaling)
			}
		})
	}
}
