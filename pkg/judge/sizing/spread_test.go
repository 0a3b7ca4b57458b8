package sizing

import (
	"math"
	"testing"
)

// TestMedianCIRanksMatchesPublishedTable checks the ranks and coverage against the published
// table of 95 % confidence intervals of a median: Campbell MJ, Gardner MJ, "Calculating
// confidence intervals for some non-parametric analyses", BMJ 1988;296:1454-6, Table 1
// (reprinted in Altman, Machin, Bryant, Gardner, "Statistics with Confidence", 2nd ed., 2000).
// The same ranks and coverages appear in "Table A.7: Confidence Intervals for the Population
// Median" (https://www.coursehero.com/file/5646626/A7/), which is where they were checked.
// Each coverage is also the exact binomial one, written out in the comment: 1 - 2·P(X <= lo-1),
// X ~ binomial(n, 1/2).
func TestMedianCIRanksMatchesPublishedTable(t *testing.T) {
	for _, c := range []struct {
		n, lo, hi int
		coverage  float64 // percent, as published (one decimal)
	}{
		{6, 1, 6, 96.9},   // 1 - 2·1/64 = 0.96875
		{7, 1, 7, 98.4},   // 1 - 2·1/128 = 0.984375
		{8, 1, 8, 99.2},   // 1 - 2·1/256 = 0.9921875; rank 2 would give 1 - 2·9/256 = 0.930 < 0.95
		{9, 2, 8, 96.1},   // 1 - 2·(1+9)/512 = 0.9609375
		{10, 2, 9, 97.9},  // 1 - 2·11/1024 = 0.978515625
		{11, 2, 10, 98.8}, // 1 - 2·12/2048 = 0.98828125
		{12, 3, 10, 96.1}, // 1 - 2·(1+12+66)/4096 = 0.961425781
		{13, 3, 11, 97.8}, // 1 - 2·92/8192 = 0.977539063
		{14, 3, 12, 98.7}, // 1 - 2·106/16384 = 0.987060547
		{15, 4, 12, 96.5}, // 1 - 2·(1+15+105+455)/32768 = 0.964843750
		{16, 4, 13, 97.9}, // 1 - 2·697/65536 = 0.978729248
		{17, 5, 13, 95.1}, // 1 - 2·(1+17+136+680+2380)/131072 = 0.950958252
		{18, 5, 14, 96.9}, // 1 - 2·4048/262144 = 0.969116211
		{19, 5, 15, 98.1}, // 1 - 2·4845/524288 = 0.981518555
		{20, 6, 15, 95.9}, // 1 - 2·(1+20+190+1140+4845+15504)/1048576 = 0.958610535
	} {
		lo, hi, cov := MedianCIRanks(c.n, 0.95)
		if lo != c.lo || hi != c.hi {
			t.Errorf("n=%d: ranks (%d,%d), published (%d,%d)", c.n, lo, hi, c.lo, c.hi)
		}
		if got := math.Round(cov*1000) / 10; got != c.coverage {
			t.Errorf("n=%d: coverage %.4f, published %.1f %%", c.n, cov, c.coverage)
		}
		if cov < 0.95 {
			t.Errorf("n=%d: coverage %.4f below the asked 95 %%", c.n, cov)
		}
	}
}

func TestMedianCIRanksEdges(t *testing.T) {
	for _, c := range []struct {
		n      int
		conf   float64
		lo, hi int
	}{
		{5, 0.95, 0, 0},     // 1 - 2/32 = 0.9375 < 0.95: no interval
		{1, 0.95, 0, 0},     // one value cannot bracket the median with any confidence
		{0, 0.95, 0, 0},     // nothing
		{6, 1, 0, 0},        // 100 % is never reached
		{6, 0, 0, 0},        // neither is a confidence of 0 meaningful
		{5, 0.90, 1, 5},     // 0.9375 >= 0.90
		{100, 0.95, 40, 61}, // normal approximation: 50 ± 1.96·5 = 40.2..59.8, exact ranks 40 and 61
	} {
		lo, hi, _ := MedianCIRanks(c.n, c.conf)
		if lo != c.lo || hi != c.hi {
			t.Errorf("n=%d conf=%v: (%d,%d), want (%d,%d)", c.n, c.conf, lo, hi, c.lo, c.hi)
		}
	}
	// Large n does not underflow: 2000 runs still give a sensible, symmetric interval.
	lo, hi, cov := MedianCIRanks(2000, 0.95)
	if lo < 900 || hi != 2001-lo || cov < 0.95 || cov > 0.96 {
		t.Errorf("n=2000: (%d,%d) coverage %v", lo, hi, cov)
	}
}

func TestSpreadOf(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name string
		xs   []float64
		want Spread
	}{
		{"empty", nil, Spread{}},
		{"only NaN", []float64{nan, math.Inf(1)}, Spread{}},
		{"single", []float64{7}, Spread{N: 1, Median: 7, Low: 7, High: 7, Interval: IntervalSingle}},
		// mean 110, deviations ±10: sd = sqrt(200/1) = 14.142, cv = 0.12856
		{"two, min-max", []float64{120, 100}, Spread{N: 2, Median: 110, Low: 100, High: 120, Interval: IntervalMinMax, CV: math.Sqrt(200) / 110}},
		{"NaN ignored", []float64{nan, 100, 120}, Spread{N: 2, Median: 110, Low: 100, High: 120, Interval: IntervalMinMax, CV: math.Sqrt(200) / 110}},
		// five: still min-max, not a 95 % interval
		{"five", []float64{5, 1, 4, 2, 3}, Spread{N: 5, Median: 3, Low: 1, High: 5, Interval: IntervalMinMax, CV: math.Sqrt(2.5) / 3}},
		// six: ranks (1,6), coverage 1 - 2/64
		{"six", []float64{6, 1, 5, 2, 4, 3}, Spread{N: 6, Median: 3.5, Low: 1, High: 6, Interval: IntervalCI95, Coverage: 0.96875, CV: math.Sqrt(3.5) / 3.5}},
		// nine 1..9: ranks (2,8) → values 2 and 8
		{"nine", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1}, Spread{N: 9, Median: 5, Low: 2, High: 8, Interval: IntervalCI95, Coverage: 1 - 20.0/512, CV: math.Sqrt(7.5) / 5}},
	} {
		got := SpreadOf(c.xs)
		if got.N != c.want.N || got.Interval != c.want.Interval || got.Median != c.want.Median ||
			got.Low != c.want.Low || got.High != c.want.High ||
			math.Abs(got.Coverage-c.want.Coverage) > 1e-12 || math.Abs(got.CV-c.want.CV) > 1e-12 {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestNoisyAbove(t *testing.T) {
	if (Spread{N: 1, CV: 0.5}).NoisyAbove(0.1) {
		t.Error("a single run has no measured variation")
	}
	if !(Spread{N: 3, CV: 0.11}).NoisyAbove(0.1) {
		t.Error("cv 11 % is above 10 %")
	}
	if (Spread{N: 3, CV: 0.10}).NoisyAbove(0.1) {
		t.Error("cv exactly 10 % is not above 10 %")
	}
}

func TestRepetitionsFor(t *testing.T) {
	// Hand values: k = 1.96·sqrt(π/2) = 2.456490.
	//   cv 0.10, ±5 %: (2.456490·2)²   = 24.137 → 25
	//   cv 0.05, ±5 %: (2.456490)²     = 6.034  → 7
	//   cv 0.08, ±5 %: (2.456490·1.6)² = 15.448 → 16
	//   cv 0.13, ±10 %: (2.456490·1.3)² = 10.198 → 11
	//   cv 0.02, ±5 %: 0.965 → the minimum, 6
	for _, c := range []struct {
		cv, within float64
		want       int
	}{
		{0.10, 0.05, 25},
		{0.05, 0.05, 7},
		{0.08, 0.05, 16},
		{0.13, 0.10, 11},
		{0.02, 0.05, 6},
		{0, 0.05, 6},
		{math.NaN(), 0.05, 6},
		{0.1, 0, 6},
		{math.Inf(1), 0.05, 6},
		{10, 0.001, 1000},
	} {
		if got := RepetitionsFor(c.cv, c.within); got != c.want {
			t.Errorf("RepetitionsFor(%v, %v) = %d, want %d", c.cv, c.within, got, c.want)
		}
	}
}

// TestLowRank: which run Low is. Below 9 runs the unluckiest (the ci95 of 6 to 8 is their
// min–max); from 9 the median's lower 95 % bound, the published rank (Campbell & Gardner), so
// that many runs less one measured below it.
func TestLowRank(t *testing.T) {
	for _, c := range []struct{ n, rank int }{{0, 0}, {1, 1}, {3, 1}, {6, 1}, {8, 1}, {9, 2}, {12, 3}, {17, 5}, {20, 6}} {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(100 + i)
		}
		s := SpreadOf(xs)
		if got := s.LowRank(); got != c.rank || c.n > 0 && s.Low != float64(100+c.rank-1) {
			t.Errorf("%d runs: low is rank %d (%v), want %d", c.n, got, s.Low, c.rank)
		}
	}
}
