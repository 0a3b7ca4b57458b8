package htmlreport

import (
	"math"
	"slices"
	"testing"
)

func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		labels []string
	}{
		{"steady throughput starts at zero", 192, 200, []string{"0", "50", "100", "150", "200"}},
		{"memory within a tenth of a MiB", 14.80, 14.86, []string{"0", "5", "10", "15"}},
		{"CPU cores", 0.198, 0.22, []string{"0", "0.05", "0.10", "0.15", "0.20", "0.25"}},
		{"no failed request", 0, 0, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{"thousands", 0, 39680, []string{"0", "10k", "20k", "30k", "40k"}},
		{"tens of thousands", 0, 12500, []string{"0", "5k", "10k", "15k"}},
		{"millions", 0, 2.2e6, []string{"0", "0.5M", "1.0M", "1.5M", "2.0M", "2.5M"}},
		{"negative data keeps its sign", -3, 7, []string{"-4", "-2", "0", "2", "4", "6", "8"}},
		{"a single point", 57, 57, []string{"0", "20", "40", "60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NiceAxis(tc.lo, tc.hi)
			if !slices.Equal(a.Labels, tc.labels) {
				t.Errorf("NiceAxis(%g, %g) labels %q, want %q (ticks %v)", tc.lo, tc.hi, a.Labels, tc.labels, a.Ticks)
			}
			if a.Min != a.Ticks[0] || a.Max != a.Ticks[len(a.Ticks)-1] || a.Min > min(tc.lo, 0) || a.Max < tc.hi {
				t.Errorf("NiceAxis(%g, %g) = [%g, %g] does not hold the data and zero", tc.lo, tc.hi, a.Min, a.Max)
			}
		})
	}
}

// Whatever the data, an axis starts at zero or below, holds the data, has a handful of ticks
// and no two of its labels read the same.
func TestNiceAxisLabelsAreDistinct(t *testing.T) {
	values := []float64{0, 1e-12, 1e-9, 3e-7, 0.001, 0.0123, 0.2, 0.5, 0.99, 1, 1.5, 7, 9.99, 10, 14.8, 14.86, 99.5, 100,
		192, 200, 999, 1001, 9999, 10001, 12345.6, 99999, 1e5, 5e5, 999999, 1e6, 2.5e6, 1e9, 1e15, 1e300, math.MaxFloat64,
		math.Inf(1), math.NaN(), -1, -14.8, -1e7}
	for _, lo := range values {
		for _, hi := range values {
			a := NiceAxis(lo, hi)
			if n := len(a.Ticks); n < 2 || n > 2*axisIntervals+2 || n != len(a.Labels) {
				t.Fatalf("NiceAxis(%g, %g): %d ticks, %d labels", lo, hi, n, len(a.Labels))
			}
			if a.Min > 0 || a.Max < 0 {
				t.Errorf("NiceAxis(%g, %g) = [%g, %g] does not hold zero", lo, hi, a.Min, a.Max)
			}
			for _, v := range []float64{lo, hi} {
				if !math.IsNaN(v) && math.Abs(v) <= maxAxis && (v < a.Min || v > a.Max) {
					t.Errorf("NiceAxis(%g, %g) = [%g, %g] leaves out %g", lo, hi, a.Min, a.Max, v)
				}
			}
			if len(slices.Compact(slices.Sorted(slices.Values(a.Labels)))) != len(a.Labels) {
				t.Errorf("NiceAxis(%g, %g) repeats a label: %q", lo, hi, a.Labels)
			}
		}
	}
}

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0.013: 0.02, 0.1: 0.1, 0.11: 0.2, 1.6: 2, 2: 2, 2.1: 5, 40: 50, 51: 100, 7936: 10000, 0: 1, -3: 1} {
		if got := niceStep(raw); math.Abs(got-want) > want*1e-9 {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
		}
	}
}

// The charts' axes come from their series: left from the left ones, right from the right.
func TestWithAxesSplitsLeftAndRight(t *testing.T) {
	c := withAxes(Chart{Series: []Series{
		{Label: "req/s", Values: []Value{199.6, Gap, 200.4}},
		{Label: "VUs", Right: true, Values: []Value{20, 21, Gap}},
	}})
	if c.YAxis == nil || c.YAxis.Min != 0 || c.YAxis.Max != 250 {
		t.Errorf("left axis %+v, want 0 to 250", c.YAxis)
	}
	if c.Y2Axis == nil || c.Y2Axis.Min != 0 || c.Y2Axis.Max != 25 {
		t.Errorf("right axis %+v, want 0 to 25", c.Y2Axis)
	}
	if c := withAxes(Chart{Series: []Series{{Label: "requests", Values: []Value{3, 9}}}}); c.Y2Axis != nil {
		t.Errorf("a chart without right-hand series got a right axis %+v", c.Y2Axis)
	}
}
