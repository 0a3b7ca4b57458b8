package plan

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// minScalingLevels: a load dimension with fewer values gives no curve worth fitting.
const minScalingLevels = 3

// scaling fits the USL to a profile's throughput against its load: the steps of its peak runs
// (N = devices), or its rows along the plan's one numeric sweep dimension (N = its value, e.g.
// WORKERS). nil when the plan varies no load.
func (in SummaryInput) scaling(profile string) *v1alpha1.ScalingFit {
	by, points, skipped := in.peakPoints(profile)
	if by == "" {
		by, points = in.sweepPoints(profile)
	}
	if by == "" {
		return nil
	}
	if len(points) == 0 && len(skipped) > 0 {
		return &v1alpha1.ScalingFit{By: by, Untrusted: []string{"no peak run of this profile PASSED, so no step is fitted: " + strings.Join(skipped, ", ")}}
	}
	sort.SliceStable(points, func(i, j int) bool { return points[i].N < points[j].N })
	out := &v1alpha1.ScalingFit{By: by, Points: int32(len(points))}
	for i, p := range points {
		if i == maxScalingPoints {
			break
		}
		out.Measured = append(out.Measured, v1alpha1.ScalingPoint{N: format(p.N, 0), Throughput: format(p.X, 2)})
	}
	fit, err := sizing.FitUSL(points)
	if err != nil {
		out.Untrusted = []string{err.Error()}
		return out
	}
	out.Lambda, out.Sigma, out.Kappa = estimate(fit.Lambda), estimate(fit.Sigma), estimate(fit.Kappa)
	if fit.Points > 3 { // 3 points leave no residual to estimate it from: "—", not 0
		out.ResidualStdErr = format(fit.ResidualSE, 2)
	}
	if fit.PeakN > 0 && !math.IsInf(fit.PeakN, 0) {
		out.PeakN, out.PeakThroughput = format(fit.PeakN, 0), format(fit.PeakX, 2)
	}
	out.Trusted = fit.Trusted
	out.Untrusted = fit.Untrusted
	if len(out.Untrusted) > 8 {
		out.Untrusted = out.Untrusted[:8]
	}
	return out
}

// maxScalingPoints bounds the points status carries for the chart (the fit uses all).
const maxScalingPoints = 200

func estimate(e sizing.Estimate) *v1alpha1.Estimate {
	out := &v1alpha1.Estimate{Value: strconv.FormatFloat(e.Value, 'g', 4, 64)}
	if !math.IsInf(e.Low, 0) && !math.IsInf(e.High, 0) && !math.IsNaN(e.Low) {
		out.Low, out.High = strconv.FormatFloat(e.Low, 'g', 4, 64), strconv.FormatFloat(e.High, 'g', 4, 64)
	}
	return out
}

// peakPoints are the steps of the profile's passing peak runs, each (devices, req/s); by is
// empty when the profile has no finished peak run, and skipped names the runs that did not pass
// with their verdicts (a generator-bound climb is INCONCLUSIVE: its steps are not the target's).
func (in SummaryInput) peakPoints(profile string) (by string, points []sizing.Point, skipped []string) {
	for i, ch := range in.Children {
		if ch.Run == nil || i >= len(in.Rows) || in.Rows[i].Profile != profile || ch.Run.Status.Peak == nil {
			continue
		}
		by = "devices (peak steps)"
		if !passed(in.Rows[i]) {
			skipped = append(skipped, fmt.Sprintf("%s %s/%s", ch.Run.Name, in.Rows[i].Phase, in.Rows[i].Verdict))
			continue
		}
		for _, st := range ch.Run.Status.Peak.Steps {
			if x := decimal(st.RequestsPerSecond); x > 0 && st.Devices > 0 {
				points = append(points, sizing.Point{N: float64(st.Devices), X: x})
			}
		}
	}
	return by, points, skipped
}

// sweepPoints are the profile's passing rows along the plan's only sweep dimension when its
// values are numbers (a load level: WORKERS, THREADS, devices, parallelism).
func (in SummaryInput) sweepPoints(profile string) (string, []sizing.Point) {
	if len(in.Spec.Sweep) != 1 || len(in.Spec.Sweep[0].Values) < minScalingLevels {
		return "", nil
	}
	d := in.Spec.Sweep[0]
	for _, v := range d.Values {
		if n, err := strconv.ParseFloat(v, 64); err != nil || n <= 0 {
			return "", nil
		}
	}
	var points []sizing.Point
	for _, r := range in.Rows {
		if r.Profile != profile || !passed(r) {
			continue
		}
		n, _ := strconv.ParseFloat(r.Values[d.Name()], 64)
		if x := throughputOf(r); x > 0 && n > 0 {
			points = append(points, sizing.Point{N: n, X: x})
		}
	}
	return d.Name(), points
}

func medianOf(xs []float64) float64 { return sizing.SpreadOf(xs).Median }
