package sizing

import (
	"math"
	"sort"
)

// Interval kinds.
const (
	// IntervalSingle is a single run: no range at all.
	IntervalSingle = "single"
	// IntervalMinMax is the smallest and largest of 2 to 5 runs: no 95 % interval of the median
	// exists below 6 runs (all n runs cover the median with probability 1-2^(1-n) < 0.95).
	IntervalMinMax = "min-max"
	// IntervalCI95 is the distribution-free 95 % confidence interval of the median from order
	// statistics, for 6 runs or more. Up to 8 runs it is the smallest and largest; from 9 its
	// ends are inner runs (LowRank), so it is no longer the spread of the runs.
	IntervalCI95 = "ci95"
)

// ciMinRuns is the first n for which the order-statistic interval reaches 95 %.
const ciMinRuns = 6

// Spread is one figure over repeated runs.
type Spread struct {
	N                 int
	Median, Low, High float64
	// Interval is IntervalSingle (N==1), IntervalMinMax (2..5) or IntervalCI95 (>=6).
	Interval string
	// Coverage is the exact coverage of the ci95 interval (0.969 for n=6); 0 otherwise.
	Coverage float64
	// CV is the sample coefficient of variation, stddev (n-1 denominator) over |mean|; 0 for N<2
	// or a zero mean.
	CV float64
}

// SpreadOf summarises repeated values. NaN and ±Inf are ignored (a missing figure is not a
// measurement); no finite value gives Spread{}.
func SpreadOf(xs []float64) Spread {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	n := len(v)
	if n == 0 {
		return Spread{}
	}
	sort.Float64s(v)
	s := Spread{N: n, Median: median(v), Low: v[0], High: v[n-1]}
	switch {
	case n == 1:
		s.Interval = IntervalSingle
	case n < ciMinRuns:
		s.Interval = IntervalMinMax
	default:
		lo, hi, cov := MedianCIRanks(n, 0.95)
		s.Interval, s.Low, s.High, s.Coverage = IntervalCI95, v[lo-1], v[hi-1], cov
	}
	s.CV = cv(v)
	return s
}

// median of sorted, non-empty values.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func cv(v []float64) float64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(n)
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(n-1)) / math.Abs(mean)
}

// MedianCIRanks returns the 1-based order statistics (lo, hi) of a distribution-free confidence
// interval of the median of n values, and its exact coverage. The number of values below the
// true median is binomial(n, 1/2), so [x(lo), x(hi)] misses the median with probability
// 2·P(X <= lo-1). lo is the largest r with P(X <= r-1) <= (1-confidence)/2 and hi = n+1-lo: the
// conservative choice, coverage >= confidence. When even [x(1), x(n)] falls short (n < 6 at
// 95 %), or the arguments make no sense, it returns 0, 0, 0.
func MedianCIRanks(n int, confidence float64) (lo, hi int, coverage float64) {
	if n < 1 || !(confidence > 0 && confidence < 1) {
		return 0, 0, 0
	}
	tail := (1 - confidence) / 2
	cdf := 0.0 // P(X <= r-1) for the r under test
	for r := 1; r <= (n+1)/2; r++ {
		next := cdf + binomHalf(n, r-1)
		if next > tail*(1+1e-12) {
			break
		}
		cdf, lo = next, r
	}
	if lo == 0 {
		return 0, 0, 0
	}
	return lo, n + 1 - lo, 1 - 2*cdf
}

// binomHalf is P(X = k) for X ~ binomial(n, 1/2), in logs so that large n does not underflow
// 2^-n before the binomial coefficient lifts it.
func binomHalf(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(a - b - c - float64(n)*math.Ln2)
}

// LowRank is the order statistic Low is, from 1 for the smallest run: 1 below 9 runs (the
// unluckiest run), then the rank of the median's lower 95 % bound (2 at 9, 6 at 20), which
// LowRank−1 runs measured less than. 0 for no runs.
func (s Spread) LowRank() int {
	if s.Interval != IntervalCI95 {
		return min(s.N, 1)
	}
	lo, _, _ := MedianCIRanks(s.N, 0.95)
	return lo
}

// NoisyAbove reports whether the runs vary more than maxCV (e.g. 0.10): too noisy to trust a
// single figure. A single run has no measured variation and is not reported as noisy.
func (s Spread) NoisyAbove(maxCV float64) bool {
	return s.N >= 2 && s.CV > maxCV
}

// maxRepetitions bounds RepetitionsFor so that an absurd cv cannot ask for an absurd plan.
const maxRepetitions = 1000

// RepetitionsFor is the number of repetitions for which the median's 95 % interval half-width is
// within `within` (0.05 = ±5 %) of the median, given the observed coefficient of variation cv:
//
//	n = ceil((1.96 · 1.2533 · cv / within)²), at least 6, at most 1000.
//
// Why: for roughly normal runs the sample median's standard error is sqrt(π/2)·σ/√n =
// 1.2533·σ/√n (the median is less efficient than the mean by that factor), so the 95 %
// half-width relative to the median is 1.96·1.2533·cv/√n; solving for n gives the formula. At
// least 6 because fewer runs have no 95 % interval of the median at all (see MedianCIRanks).
// A cv or within that is not positive and finite gives the minimum, 6.
func RepetitionsFor(cv, within float64) int {
	if !(cv > 0) || !(within > 0) || math.IsInf(cv, 0) || math.IsInf(within, 0) {
		return ciMinRuns
	}
	z := 1.96 * math.Sqrt(math.Pi/2) * cv / within
	n := math.Ceil(z * z)
	switch {
	case n > maxRepetitions:
		return maxRepetitions
	case n < ciMinRuns:
		return ciMinRuns
	}
	return int(n)
}
