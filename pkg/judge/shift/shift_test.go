package shift

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// series is n values around level with noise cv (a fraction of level), levels changing by
// shift (a fraction) at each of at; seeded.
func series(seed uint64, n int, level, cv float64, shift float64, at ...int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		l := level
		for _, a := range at {
			if i >= a {
				l *= 1 + shift
			}
		}
		out[i] = l * (1 + cv*rng.NormFloat64())
	}
	return out
}

func indices(cps []ChangePoint) []int {
	out := []int{}
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

func TestDetect(t *testing.T) {
	outlier := series(3, 20, 100, 0.02, 0)
	outlier[9] = 140
	for _, tc := range []struct {
		name   string
		values []float64
		dir    v1alpha1.Direction
		want   []int
	}{
		{"a clean step is found at the first run of the new level", series(1, 20, 1000, 0.02, -0.2, 12), v1alpha1.HigherIsBetter, []int{12}},
		{"a step in the last runs", series(1, 20, 1000, 0.02, 0.3, 16), v1alpha1.LowerIsBetter, []int{16}},
		{"no shift gives none", series(2, 20, 1000, 0.05, 0), v1alpha1.HigherIsBetter, []int{}},
		{"two steps give two", series(4, 30, 100, 0.02, 0.2, 10, 20), v1alpha1.LowerIsBetter, []int{10, 20}},
		{"a single outlier is not a change point", outlier, v1alpha1.LowerIsBetter, []int{}},
		{"constant values", []float64{5, 5, 5, 5, 5, 5, 5, 5}, v1alpha1.LowerIsBetter, []int{}},
		{"too short to split", []float64{1, 2, 3}, v1alpha1.LowerIsBetter, []int{}},
		{"empty", nil, v1alpha1.LowerIsBetter, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Detect(tc.values, tc.dir, Options{})
			if !reflect.DeepEqual(indices(got), tc.want) {
				t.Fatalf("change points at %v, want %v: %+v", indices(got), tc.want, got)
			}
		})
	}
}

func TestChangePointFields(t *testing.T) {
	v := []float64{100, 101, 99, 100, 100, 101, 99, 100, 120, 121, 119, 120, 120, 121, 119, 120}
	for _, tc := range []struct {
		dir  v1alpha1.Direction
		want string
	}{{v1alpha1.HigherIsBetter, Better}, {v1alpha1.LowerIsBetter, Worse}, {"", ""}} {
		got := Detect(v, tc.dir, Options{})
		if len(got) != 1 {
			t.Fatalf("%s: %+v, want one change point", tc.dir, got)
		}
		cp := got[0]
		if cp.Index != 8 || cp.Before != 100 || cp.After != 120 || math.Abs(cp.ShiftPercent-20) > 1e-9 || cp.Direction != tc.want {
			t.Errorf("%s: %+v, want index 8, 100 -> 120, +20 %%, %q", tc.dir, cp, tc.want)
		}
		if smallest := (Options{}).SmallestP(); cp.PValue > DefaultPValue || cp.PValue < smallest {
			t.Errorf("p %g, want within [%g, %g]", cp.PValue, smallest, DefaultPValue)
		}
	}
}

// The same values give the same points, p-values included; so do calls in any order.
func TestDetectIsDeterministic(t *testing.T) {
	v := series(9, 40, 500, 0.05, 0.1, 20)
	first := Detect(v, v1alpha1.LowerIsBetter, Options{})
	Detect(series(10, 40, 500, 0.05, 0), v1alpha1.LowerIsBetter, Options{})
	if again := Detect(v, v1alpha1.LowerIsBetter, Options{}); !reflect.DeepEqual(first, again) {
		t.Fatalf("%+v then %+v", first, again)
	}
}

// Past the window, the series is analysed in overlapping windows; a step is found once.
func TestDetectWindows(t *testing.T) {
	v := series(5, 120, 100, 0.02, 0.2, 30, 90)
	got := Detect(v, v1alpha1.LowerIsBetter, Options{Window: 40})
	if !reflect.DeepEqual(indices(got), []int{30, 90}) {
		t.Fatalf("change points %+v, want 30 and 90", got)
	}
	if got[0].Before > 105 || got[1].After < 140 {
		t.Errorf("levels %+v, want about 100 -> 120 -> 144", got)
	}
	for _, tc := range []struct {
		n, w int
		want [][2]int
	}{
		{10, 50, [][2]int{{0, 10}}},
		{50, 50, [][2]int{{0, 50}}},
		{60, 40, [][2]int{{0, 40}, {20, 60}}},
		{100, 40, [][2]int{{0, 40}, {20, 60}, {40, 80}, {60, 100}}},
	} {
		if got := windows(tc.n, tc.w); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("windows(%d, %d) = %v, want %v", tc.n, tc.w, got, tc.want)
		}
	}
}

// Otava's test finds the clean step too; a p-value under the permutations' smallest finds
// nothing.
func TestTests(t *testing.T) {
	v := series(1, 20, 1000, 0.02, -0.2, 12)
	if got := Detect(v, v1alpha1.HigherIsBetter, Options{Test: TTest, PValue: OtavaPValue}); !reflect.DeepEqual(indices(got), []int{12}) {
		t.Errorf("t-test: %+v, want 12", got)
	}
	o := Options{PValue: 0.001, Permutations: 199}
	if o.SmallestP() != 0.005 {
		t.Errorf("smallest p %g, want 0.005", o.SmallestP())
	}
	if got := Detect(v, v1alpha1.HigherIsBetter, o); len(got) != 0 {
		t.Errorf("p 0.001 with 199 permutations: %+v, want none (unreachable)", got)
	}
	if got := Detect(v, v1alpha1.HigherIsBetter, Options{PValue: 0.001, Permutations: 999}); !reflect.DeepEqual(indices(got), []int{12}) {
		t.Errorf("p 0.001 with 999 permutations: %+v, want 12", got)
	}
}

func TestRecent(t *testing.T) {
	cps := []ChangePoint{{Index: 3}, {Index: 15}, {Index: 18}}
	for _, tc := range []struct {
		lastN int
		want  []int
	}{{0, []int{}}, {1, []int{}}, {2, []int{18}}, {5, []int{15, 18}}, {20, []int{3, 15, 18}}, {50, []int{3, 15, 18}}} {
		if got := indices(Recent(cps, 20, tc.lastN)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("last %d: %v, want %v", tc.lastN, got, tc.want)
		}
	}
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	z := series(11, 13, 10, 0.3, 0.5, 6)
	got := bestSplit(z, 2)
	best := split{}
	for tau := 2; tau <= len(z)-2; tau++ {
		if q := naiveQ(z[:tau], z[tau:]); best.tau == 0 || q > best.q {
			best = split{tau, q}
		}
	}
	if got.tau != best.tau || math.Abs(got.q-best.q) > 1e-9*math.Abs(best.q) {
		t.Fatalf("bestSplit %+v, definition %+v", got, best)
	}
}

func naiveQ(x, y []float64) float64 {
	m, n := float64(len(x)), float64(len(y))
	var xy, xx, yy float64
	for _, a := range x {
		for _, b := range y {
			xy += math.Abs(a - b)
		}
	}
	for i := range x {
		for k := i + 1; k < len(x); k++ {
			xx += math.Abs(x[i] - x[k])
		}
	}
	for i := range y {
		for k := i + 1; k < len(y); k++ {
			yy += math.Abs(y[i] - y[k])
		}
	}
	e := 2*xy/(m*n) - xx/(m*(m-1)/2) - yy/(n*(n-1)/2)
	return m * n / (m + n) * e
}
