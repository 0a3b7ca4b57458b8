package trend

import (
	"math"
	"slices"
	"time"
)

// The fit's arithmetic: least squares, autocorrelation, Theil–Sen.

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
