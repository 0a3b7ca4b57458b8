// Package trend tells a memory leak from the growth expected while devices register: it cuts
// the warm-up (the registration ramp, given or detected), fits memory over the rest of the run,
// and says whether the slope is significantly above zero and reaches the memory limit within a
// horizon. Two points (before and after) cannot tell the two apart; the trend can.
//
// The fit is ordinary least squares, its 95 % confidence interval from Student's t with the
// sample count corrected for autocorrelation, and, as a robust check, the Theil–Sen slope with
// Sen's interval. A leak needs both intervals above zero, so neither one outlier (which moves
// OLS) nor a run of ties (which narrows Sen's interval) makes a leak on its own. Theil–Sen
// rather than e.g. Huber: it needs no tuning constant and its interval comes from ranks alone.
//
// Memory samples a few seconds apart are autocorrelated (a heap grows and is collected over
// many samples). Both intervals are widened with the AR(1) effective sample size
// n_eff = n(1−r1)/(1+r1), r1 the lag-1 autocorrelation of the OLS residuals. It is an
// approximation: r1 from a few hundred residuals is biased low, so a strongly correlated wander
// (φ = 0.95) still reads as a leak in about 6 % of trendless series instead of 2.5 %
// (TestFitAutocorrelatedNoiseIsStable; 41 % uncorrected). The horizon guards the rest: a slow
// wander rarely projects to the limit within 30 days. Pure: no client calls.
package trend

import (
	"fmt"
	"math"
	"slices"
	"time"

	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// Verdicts.
const (
	Leak         = "leak"
	Stable       = "stable"
	Insufficient = "insufficient"
)

// MinSamples is how many samples the fit needs after the warm-up: fewer cannot give an
// interval that means anything once autocorrelation is accounted for.
const MinSamples = 10

// DefaultHorizon is how far ahead a projection to the limit counts as a leak: 30 days.
const DefaultHorizon = 720 * time.Hour

// Sample is memory at one moment.
type Sample struct {
	At  time.Time
	MiB float64
}

// Options say how to judge. Zero values take the defaults.
type Options struct {
	// WarmUp, when positive, is cut from Start on; zero detects it (DetectWarmUp).
	WarmUp time.Duration
	// Start is when the warm-up starts (the load's start); zero: the first sample.
	Start time.Time
	// LimitMiB is the memory the target may use; zero: no projection, and a leak is judged by
	// the interval alone.
	LimitMiB float64
	// Horizon: a projection to the limit further away than this is stable. Default 30 days.
	Horizon time.Duration
	// MinWarmUp, when positive, is the shortest warm-up from Start, given or detected: the time
	// a process is known to settle in (a runner's collector filling its windows).
	MinWarmUp time.Duration
}

// Result is the fit and its verdict.
type Result struct {
	Verdict string
	// WarmUp is what was cut from the first sample; WarmUpDetected says it was detected.
	WarmUp         time.Duration
	WarmUpDetected bool
	// Samples fitted (after the warm-up) and their effective count under autocorrelation.
	Samples   int
	Effective float64
	// Lag1 is the lag-1 autocorrelation of the OLS residuals.
	Lag1 float64
	// Slope and its 95 % interval, MiB per hour (OLS).
	Slope, Low, High float64
	// TheilSen is the median pairwise slope and SenLow, SenHigh its 95 % interval, MiB per hour.
	TheilSen, SenLow, SenHigh float64
	// From and To are the first and last samples fitted; StartMiB and EndMiB the fitted line there.
	From, To         time.Time
	StartMiB, EndMiB float64
	// FullIn is the projected time from To until the line reaches the limit; zero when the
	// slope is not positive or there is no limit (HasProjection false).
	FullIn        time.Duration
	HasProjection bool
	Horizon       time.Duration
	Message       string
}

// Fit judges samples (in time order; unordered ones are sorted).
func Fit(samples []Sample, o Options) Result {
	if o.Horizon <= 0 {
		o.Horizon = DefaultHorizon
	}
	s := slices.Clone(samples)
	slices.SortStableFunc(s, func(a, b Sample) int { return a.At.Compare(b.At) })
	r := Result{Verdict: Insufficient, Horizon: o.Horizon}
	if len(s) == 0 {
		r.Message = fmt.Sprintf("no memory samples: the trend needs %d after the warm-up", MinSamples)
		return r
	}
	cut, origin := 0, s[0].At
	if !o.Start.IsZero() {
		origin = o.Start
	}
	if o.WarmUp > 0 {
		r.WarmUp = o.WarmUp
		cut = firstFrom(s, 0, origin.Add(o.WarmUp))
	} else {
		cut = DetectWarmUp(s)
		r.WarmUpDetected = true
		r.WarmUp = s[cut].At.Sub(origin)
	}
	warmUp := r.WarmUp.Round(time.Second).String()
	if o.MinWarmUp > r.WarmUp {
		r.WarmUp, r.WarmUpDetected = o.MinWarmUp, false
		warmUp = r.WarmUp.Round(time.Second).String() + " (the least for this process: it settles first)"
		cut = firstFrom(s, cut, origin.Add(o.MinWarmUp))
	}
	rest := s[cut:]
	r.Samples = len(rest)
	if len(rest) < MinSamples {
		r.Message = fmt.Sprintf("%d memory samples after a warm-up of %s: the trend needs %d (a longer run or a shorter sampleInterval)",
			len(rest), warmUp, MinSamples)
		return r
	}
	x, y := hours(rest), mibs(rest)
	ols := leastSquares(x, y)
	r.Slope, r.Lag1 = ols.slope, lag1(ols.residuals)
	r.Effective = effective(len(rest), r.Lag1)
	r.From, r.To = rest[0].At, rest[len(rest)-1].At
	r.StartMiB, r.EndMiB = ols.at(x[0]), ols.at(x[len(x)-1])
	// The t interval with n_eff − 2 degrees of freedom, its standard error inflated by n/n_eff:
	// samples a few seconds apart are not independent, and treating them so would call noise a trend.
	// Samples that move together are worth fewer than 3 independent ones: the t interval then
	// takes the fewest degrees of freedom it has (1, t = 12.7), so it is wide but finite, and
	// only a steep, steady rise is significant.
	df := max(r.Effective-2, 1)
	half := sizing.StudentTQuantile(0.975, df) * ols.se * math.Sqrt(float64(len(rest))/r.Effective)
	r.Low, r.High = r.Slope-half, r.Slope+half
	r.TheilSen, r.SenLow, r.SenHigh = theilSen(x, y, float64(len(rest))/r.Effective)

	if o.LimitMiB > 0 && r.Slope > 0 {
		r.HasProjection = true
		r.FullIn = time.Duration(max(o.LimitMiB-r.EndMiB, 0) / r.Slope * float64(time.Hour))
	}
	within := !r.HasProjection && o.LimitMiB <= 0 || r.HasProjection && r.FullIn <= o.Horizon
	slope := fmt.Sprintf("%.3g MiB/h (95%% CI %.3g to %.3g; Theil–Sen %.3g, %.3g to %.3g) over %d samples after a warm-up of %s",
		r.Slope, r.Low, r.High, r.TheilSen, r.SenLow, r.SenHigh, r.Samples, warmUp)
	switch {
	case r.Low > 0 && r.SenLow > 0 && within:
		r.Verdict = Leak
		r.Message = "memory grows " + slope
		if r.HasProjection {
			r.Message += fmt.Sprintf(": the limit of %.0f MiB is reached in %s", o.LimitMiB, r.FullIn.Round(time.Minute))
		}
	case r.Low > 0 && r.SenLow > 0:
		r.Verdict = Stable
		r.Message = fmt.Sprintf("memory grows %s, but reaches the limit only in %s, beyond the horizon of %s", slope, r.FullIn.Round(time.Hour), o.Horizon)
	default:
		r.Verdict = Stable
		r.Message = "no significant growth: " + slope
	}
	return r
}

// DetectWarmUp is the index of the first sample after the warm-up: the split of the series
// into two straight lines with the least total squared error, kept only when the first line
// climbs more than twice as fast as the second (a registration ramp, then a plateau or a slow
// leak). Otherwise there is no warm-up (0). The second part keeps at least MinSamples samples
// and the first at least 3, so a ramp longer than the run minus MinSamples samples is not found:
// then give the warm-up.
func DetectWarmUp(s []Sample) int {
	x, y := hours(s), mibs(s)
	best, bestSSE := 0, math.Inf(1)
	for k := 3; k <= len(s)-MinSamples; k++ {
		a, b := leastSquares(x[:k], y[:k]), leastSquares(x[k:], y[k:])
		if sse := a.sse + b.sse; sse < bestSSE {
			best, bestSSE = k, sse
		}
	}
	if best == 0 {
		return 0
	}
	ramp, rest := leastSquares(x[:best], y[:best]), leastSquares(x[best:], y[best:])
	if ramp.slope <= 0 || ramp.slope <= 2*max(rest.slope, 0) {
		return 0
	}
	return best
}

type line struct {
	slope, intercept float64
	se               float64 // standard error of the slope, independent samples
	sse              float64
	residuals        []float64
}

func (l line) at(x float64) float64 { return l.intercept + l.slope*x }

func leastSquares(x, y []float64) line {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	l := line{}
	if sxx > 0 {
		l.slope = sxy / sxx
	}
	l.intercept = my - l.slope*mx
	l.residuals = make([]float64, len(x))
	for i := range x {
		l.residuals[i] = y[i] - l.at(x[i])
		l.sse += l.residuals[i] * l.residuals[i]
	}
	if len(x) > 2 && sxx > 0 {
		l.se = math.Sqrt(l.sse / (n - 2) / sxx)
	}
	return l
}

// lag1 is the lag-1 autocorrelation of residuals (mean zero by construction).
func lag1(e []float64) float64 {
	var num, den float64
	for i := range e {
		den += e[i] * e[i]
		if i > 0 {
			num += e[i] * e[i-1]
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// effective is the effective sample count n(1−r1)/(1+r1) of an AR(1) series. A negative r1
// would claim more independence than there are samples: it is taken as 0.
func effective(n int, r1 float64) float64 {
	r1 = min(max(r1, 0), 0.999)
	return float64(n) * (1 - r1) / (1 + r1)
}

// theilSen is the median of the pairwise slopes and Sen's 95 % interval: the ranks
// (N ∓ z·√Var(S))/2 of the sorted slopes, Var(S) being Kendall's S variance n(n−1)(2n+5)/18
// times inflate (n/n_eff, the same autocorrelation correction as OLS). With n ≤ 240 (the
// samples the timeline keeps) the n² slopes are cheap.
func theilSen(x, y []float64, inflate float64) (med, lo, hi float64) {
	var slopes []float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if dx := x[j] - x[i]; dx > 0 {
				slopes = append(slopes, (y[j]-y[i])/dx)
			}
		}
	}
	if len(slopes) == 0 {
		return 0, math.Inf(-1), math.Inf(1)
	}
	slices.Sort(slopes)
	N := float64(len(slopes))
	med = quantileSorted(slopes, (N-1)/2)
	n := float64(len(x))
	c := 1.959964 * math.Sqrt(n*(n-1)*(2*n+5)/18*inflate)
	lower, upper := (N-c)/2, (N+c)/2
	lo, hi = math.Inf(-1), math.Inf(1)
	if lower >= 1 {
		lo = quantileSorted(slopes, lower-1)
	}
	if upper <= N {
		hi = quantileSorted(slopes, upper-1)
	}
	return med, lo, hi
}

// quantileSorted interpolates s at a fractional index.
func quantileSorted(s []float64, at float64) float64 {
	i := int(math.Floor(at))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := at - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

func hours(s []Sample) []float64 {
	x := make([]float64, len(s))
	for i := range s {
		x[i] = s[i].At.Sub(s[0].At).Hours()
	}
	return x
}

func mibs(s []Sample) []float64 {
	y := make([]float64, len(s))
	for i := range s {
		y[i] = s[i].MiB
	}
	return y
}

// firstFrom is the index of the first sample of s (sorted), at or after from, that is not
// before end.
func firstFrom(s []Sample, from int, end time.Time) int {
	for from < len(s) && s[from].At.Before(end) {
		from++
	}
	return from
}
