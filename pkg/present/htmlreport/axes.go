package htmlreport

import (
	"math"
	"strconv"
)

// Axis is a value axis as the page draws it: its range, its ticks and their labels. Every
// chart's axes are chosen here, by one rule, rather than by the charting library: it fits the
// range to the data, so a steady 200 req/s read as a climb from 192 to 200, and it labels ticks
// with a fixed precision, so 14.80 to 14.86 MiB read "14.8" four times.
type Axis struct {
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Ticks  []float64 `json:"ticks"`
	Labels []string  `json:"labels"`
}

// axisIntervals is about how many steps an axis is cut into (300 px high charts).
const axisIntervals = 5

// maxAxis and minAxisSpan bound an axis, whatever values a runner reported.
const (
	maxAxis     = 1e300
	minAxisSpan = 1e-9
)

// NiceAxis is the axis of data from lo to hi. It starts at zero (or below, for negative
// data): every quantity the reports chart (rates, counts, VUs, memory, cores, milliseconds)
// is measured from zero, and a chart that starts elsewhere makes noise look like a trend. Its
// step is 1, 2 or 5 times a power of ten and its labels carry the decimals that step needs, so
// no two ticks read the same.
func NiceAxis(lo, hi float64) Axis {
	if math.IsNaN(lo) || math.IsInf(lo, 0) {
		lo = 0
	}
	if math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = 0
	}
	// The data is a tenant's: bounds that keep every step a normal, finite number.
	lo, hi = max(min(lo, hi, 0), -maxAxis), min(max(lo, hi, 0), maxAxis)
	if hi-lo < minAxisSpan {
		hi = lo + 1 // all zero (no failed request): an axis from 0 to 1
	}
	step := niceStep((hi - lo) / axisIntervals)
	first, last := math.Floor(lo/step), math.Ceil(hi/step)
	a := Axis{Min: first * step, Max: last * step}
	for i := first; i <= last; i++ {
		a.Ticks = append(a.Ticks, tidy(i*step, step))
	}
	a.Min, a.Max = a.Ticks[0], a.Ticks[len(a.Ticks)-1]
	a.Labels = tickLabels(a.Ticks, step)
	return a
}

// niceStep is the smallest of 1, 2, 5 times a power of ten that is at least raw.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// tidy rounds a multiple of step to the decimals the step has, so 3×0.1 is 0.3, and never -0.
func tidy(v, step float64) float64 {
	d := decimals(step)
	if d > 15 {
		return v + 0
	}
	p := math.Pow(10, float64(d))
	return math.Round(v*p)/p + 0
}

// decimals is how many decimals tell multiples of step apart.
func decimals(step float64) int {
	if !(step > 0) {
		return 0
	}
	return max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
}

// tickLabels writes ticks step apart, in thousands (k) or millions (M) when they are large.
func tickLabels(ticks []float64, step float64) []string {
	top := 0.0
	for _, t := range ticks {
		top = max(top, math.Abs(t))
	}
	scale, suffix := 1.0, ""
	switch {
	case top >= 1e6:
		scale, suffix = 1e6, "M"
	case top >= 1e4:
		scale, suffix = 1e3, "k"
	}
	d := min(decimals(step/scale), 12)
	out := make([]string, len(ticks))
	for i, t := range ticks {
		if t == 0 {
			out[i] = "0"
			continue
		}
		out[i] = strconv.FormatFloat(t/scale, 'f', d, 64) + suffix
	}
	return out
}

// withAxes sets a chart's value axes from its series: the left one from the series on the
// left, the right one (when a series is on the right) from those.
func withAxes(c Chart) Chart {
	var left, right []Series
	for _, s := range c.Series {
		if s.Right {
			right = append(right, s)
		} else {
			left = append(left, s)
		}
	}
	if len(c.Points) > 0 { // dots share the left axis, which must reach the slowest of them
		dots := Series{Values: make([]Value, 0, len(c.Points))}
		for _, p := range c.Points {
			dots.Values = append(dots.Values, Value(p.Y))
		}
		left = append(left, dots)
	}
	if len(left) > 0 {
		a := NiceAxis(extent(left))
		c.YAxis = &a
	}
	if len(right) > 0 {
		a := NiceAxis(extent(right))
		c.Y2Axis = &a
	}
	return c
}

// extent is the smallest and largest value of the series, gaps left out; 0, 0 without any.
func extent(series []Series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s.Values {
			f := float64(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}
