// Package shift finds where a metric shifted across a test's runs: change points in the series
// of whole-run values (one per kept run, in run order) by E-Divisive means, each with the run
// where the new level starts, the means either side, the relative shift and its p-value. It
// reads only its arguments and makes no client calls: the kubectl plugin's trend command and
// the controller's rollup call the same functions.
//
// pkg/judge/trend is another thing: a memory leak's slope within one run.
package shift

import (
	"math"
	"sort"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Test is how a candidate change point's significance is judged.
type Test string

const (
	// Permutation is the paper's test: the candidate's q̂ against the best q̂ of random
	// reorderings of its segment. It assumes nothing about the values' distribution.
	Permutation Test = "permutation"
	// TTest is Otava's: Student's two-sample t-test of the two sides of the candidate.
	TTest Test = "ttest"
)

// Defaults. PValue and Permutations are fleetbench's, from BenchmarkShiftDetection
// (hack/bench/BASELINES.md). A namespace keeps 20 runs. At Otava's p 0.001 a permutation test
// needs 999 reorderings before any p-value can reach it, and then finds half as many shifts on
// 20 runs (10 % at 5 % noise: 24 % against 48 %). At p 0.01 with 199 permutations (the
// smallest reachable p-value is 1/200 = 0.005) it finds about as many as Otava's t-test at
// 0.001, with fewer false positives on series without a shift (1 % a metric against 1.3 to
// 3.3 %: the t-test's p-value ignores that the split tested is the best of many). p 0.05
// finds more and has 4 to 7 % false positives a metric, too many across five metrics. The
// permutation test stays the default though Otava's t-test finds a shift in the last 2 or 3
// runs more often: it assumes nothing of the noise, and with heavy tails (one run in ten on a
// noisy node) it finds 79 % of 10 % shifts on 20 runs where the t-test finds 64 %.
const (
	DefaultWindow       = 50    // Otava's window_len
	DefaultPValue       = 0.01  // Otava: 0.001, see above
	DefaultPermutations = 199   // smallest reachable p-value 0.005
	DefaultMinSegment   = 2     // the fewest runs a level is made of
	OtavaPValue         = 0.001 // Otava's max_pvalue, for comparison
)

// Bounds, whatever a caller asks: the work of one Detect is at most about
// MaxRuns/Window·2 windows × maxPointsPerWindow tests × MaxPermutations × Window² steps.
const (
	MaxRuns            = 500
	MaxWindow          = 200
	MaxPermutations    = 9999
	maxPointsPerWindow = 16
)

// Options tune Detect; the zero value is the defaults.
type Options struct {
	// Window is how many consecutive runs are analysed together (Otava's window_len): a
	// longer series is cut into windows overlapping by half. Default DefaultWindow.
	Window int `json:"window"`
	// PValue is the largest p-value of an accepted change point. Default DefaultPValue.
	PValue float64 `json:"pValue"`
	// Test judges significance. Default Permutation.
	Test Test `json:"test"`
	// Permutations of the permutation test; the smallest p-value it can give is
	// 1/(Permutations+1). Default DefaultPermutations.
	Permutations int `json:"permutations"`
	// MinSegment is the fewest runs either side of a change point. Default DefaultMinSegment.
	MinSegment int `json:"minSegment"`
}

// WithDefaults is the options as Detect uses them: defaults filled in, bounds applied.
func (o Options) WithDefaults() Options {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if !(o.PValue > 0 && o.PValue < 1) {
		o.PValue = DefaultPValue
	}
	if o.Test == "" {
		o.Test = Permutation
	}
	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}
	if o.MinSegment <= 0 {
		o.MinSegment = DefaultMinSegment
	}
	o.Permutations = min(o.Permutations, MaxPermutations)
	o.MinSegment = min(o.MinSegment, 10)
	o.Window = min(max(o.Window, 4*o.MinSegment), MaxWindow)
	return o
}

// SmallestP is the smallest p-value the options' test can give: 1/(Permutations+1) for the
// permutation test; 0 for the t-test. A PValue below it finds nothing.
func (o Options) SmallestP() float64 {
	o = o.WithDefaults()
	if o.Test == TTest {
		return 0
	}
	return 1 / float64(o.Permutations+1)
}

// Verdicts of a shift.
const (
	Better = "better"
	Worse  = "worse"
)

// ChangePoint is where a series moved to a new level.
type ChangePoint struct {
	// Index is the first value (run) of the new level.
	Index int `json:"index"`
	// Before and After are the means of the segments either side, up to the neighbouring
	// change points.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// ShiftPercent is After−Before in % of Before (0 when Before is 0).
	ShiftPercent float64 `json:"shiftPercent"`
	// PValue is the test's, within the window the point was found in.
	PValue float64 `json:"pValue"`
	// Direction is Better or Worse given the metric's direction; "" when it has none.
	Direction string `json:"direction,omitempty"`
}

// Detect finds the change points of values (one per run, in run order) of a metric whose
// direction is dir, ascending by index. Non-finite values must be left out by the caller. A
// series longer than MaxRuns is analysed over its last MaxRuns values. Deterministic: the
// permutations are seeded from the values.
func Detect(values []float64, dir v1alpha1.Direction, o Options) []ChangePoint {
	o = o.WithDefaults()
	offset := max(0, len(values)-MaxRuns)
	z := values[offset:]
	found := map[int]float64{} // index into z -> p
	for _, w := range windows(len(z), o.Window) {
		cuts, ps := divide(z[w[0]:w[1]], o)
		for _, c := range cuts {
			at := w[0] + c
			merge(found, at, ps[c])
		}
	}
	idx := make([]int, 0, len(found))
	for i := range found {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]ChangePoint, 0, len(idx))
	for k, i := range idx {
		lo, hi := 0, len(z)
		if k > 0 {
			lo = idx[k-1]
		}
		if k+1 < len(idx) {
			hi = idx[k+1]
		}
		before, after := mean(z[lo:i]), mean(z[i:hi])
		cp := ChangePoint{Index: offset + i, Before: before, After: after, PValue: found[i]}
		if before != 0 {
			cp.ShiftPercent = (after - before) / math.Abs(before) * 100
		}
		cp.Direction = direction(before, after, dir)
		out = append(out, cp)
	}
	return out
}

// windows are [from, to) ranges of length w overlapping by half, the last ending at n; one
// range when n <= w.
func windows(n, w int) [][2]int {
	if n <= w {
		return [][2]int{{0, n}}
	}
	var out [][2]int
	for from := 0; ; from += w / 2 {
		if from+w >= n {
			return append(out, [2]int{n - w, n})
		}
		out = append(out, [2]int{from, from + w})
	}
}

// merge adds a change point found in one window: the same shift found by two overlapping
// windows within a run of each other is one point, the more significant.
func merge(found map[int]float64, at int, p float64) {
	for _, i := range []int{at, at - 1, at + 1} { // fixed order: deterministic
		q, ok := found[i]
		if !ok {
			continue
		}
		if p < q || p == q && at < i {
			delete(found, i)
			found[at] = p
		}
		return
	}
	found[at] = p
}

func direction(before, after float64, dir v1alpha1.Direction) string {
	switch {
	case after == before:
		return ""
	case dir == v1alpha1.HigherIsBetter:
		if after > before {
			return Better
		}
		return Worse
	case dir == v1alpha1.LowerIsBetter:
		if after < before {
			return Better
		}
		return Worse
	}
	return ""
}

// Recent is the change points whose new level starts within the last lastN of runs values:
// what a gate asks ("did anything shift in the last N releases"). The points are Detect's.
func Recent(points []ChangePoint, runs, lastN int) []ChangePoint {
	var out []ChangePoint
	for _, p := range points {
		if lastN > 0 && p.Index >= runs-lastN {
			out = append(out, p)
		}
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
