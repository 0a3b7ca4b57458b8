package compare

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// Properties on synthetic runs where the truth is known. Seeded, so they cannot flake; the
// bounds leave room for the sampling error of 300 trials (the measured rates are in
// BenchmarkDecisionRates and hack/bench/BASELINES.md).

func TestAAComparisonsRarelyAlarm(t *testing.T) {
	for _, sc := range []scenario{
		{kind: Windows, n: 30, cv: 0.05, phi: 0.5, ratio: 1},
		{kind: Windows, n: 30, cv: 0.05, phi: 0, ratio: 1},
		{kind: Windows, n: 120, cv: 0.10, phi: 0.7, ratio: 1},
		{kind: Repetitions, n: 5, cv: 0.09, ratio: 1},
		{kind: Repetitions, n: 10, cv: 0.09, ratio: 1},
	} {
		alarm, regressed := simulate(sc, 300, 11)
		// alpha 0.05; 300 trials have a standard error of 1.3 points
		if alarm > 0.09 || regressed != 0 {
			t.Errorf("%+v: A/A alarms %.1f %%, regressed %.1f %%; want ≤ 9 %% and none regressed", sc, 100*alarm, 100*regressed)
		}
	}
}

// Autocorrelated windows taken as independent samples alarm far more often than alpha: the
// blocks are what keeps A/A comparisons quiet.
func TestBlocksAreWhatKeepsAutocorrelatedAAQuiet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	alarms := 0
	for range 300 {
		b, c := ar1(rng, 30, 1000, 0.05, 0.7), ar1(rng, 30, 1000, 0.05, 0.7)
		if pLess(c, b) < Alpha { // unblocked
			alarms++
		}
	}
	if alarms < 45 { // > 15 %
		t.Fatalf("unblocked test alarmed on %d of 300 A/A comparisons; the premise of blocking is gone", alarms)
	}
	blocked, _ := simulate(scenario{kind: Windows, n: 30, cv: 0.05, phi: 0.7, ratio: 1}, 300, 5)
	if blocked > 0.09 {
		t.Fatalf("blocked: %.1f %% alarms", 100*blocked)
	}
}

func TestLargeDropsAreAlwaysRegressed(t *testing.T) {
	for _, sc := range []scenario{
		{kind: Windows, n: 30, cv: 0.05, phi: 0.5, ratio: 0.5},
		{kind: Repetitions, n: 5, cv: 0.09, ratio: 0.5},
	} {
		alarm, regressed := simulate(sc, 300, 13)
		if regressed != 1 || alarm != 1 {
			t.Errorf("%+v: a 50 %% drop was regressed in %.1f %% of trials", sc, 100*regressed)
		}
	}
}

// A 20 % drop is detected (OK or Regressed) with 30 windows or 5 repetitions a side.
func TestTwentyPercentDropIsDetected(t *testing.T) {
	for _, sc := range []scenario{
		{kind: Windows, n: 30, cv: 0.05, phi: 0.5, ratio: 0.8},
		{kind: Repetitions, n: 5, cv: 0.09, ratio: 0.8},
	} {
		if alarm, _ := simulate(sc, 300, 17); alarm < 0.85 {
			t.Errorf("%+v: detected in %.1f %%", sc, 100*alarm)
		}
	}
}

// 3 repetitions a side never decide, whatever the difference.
func TestThreeRepetitionsAreTooFew(t *testing.T) {
	m := Builtins()[0]
	row := Row(m, Side{Present: true, Whole: 1000, Values: []float64{1000, 1010, 990}},
		Side{Present: true, Whole: 100, Values: []float64{100, 101, 99}}, Repetitions)
	if row.Decision != v1alpha1.ComparisonTooFewSamples || row.Note != "3 vs 3 repetitions: a one-sided rank test cannot reach p < 0.05 (smallest p 0.0500); it needs at least 4 a side" {
		t.Fatalf("%+v", row)
	}
	row = Row(m, Side{Present: true, Whole: 1000, Values: []float64{1000, 1010, 990, 1005}},
		Side{Present: true, Whole: 100, Values: []float64{100, 101, 99, 98}}, Repetitions)
	if row.Decision != v1alpha1.ComparisonRegressed || row.PValue != "0.0143" {
		t.Fatalf("4 a side: %+v", row)
	}
}

// The same input gives the same output, bootstrap included.
func TestTestIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b, c := ar1(rng, 60, 100, 0.1, 0.5), ar1(rng, 60, 95, 0.1, 0.5)
	first := Test(b, c, Windows, v1alpha1.HigherIsBetter, BaselineEdges)
	for range 5 {
		if again := Test(b, c, Windows, v1alpha1.HigherIsBetter, BaselineEdges); !reflect.DeepEqual(first, again) {
			t.Fatalf("%+v != %+v", first, again)
		}
	}
}

// Beyond the ok band but within the noise: no decision against the run, and the note says why.
func TestBeyondBandButNoiseIsSuccess(t *testing.T) {
	base := []float64{1000, 600, 1400, 900, 1100} // mean 1000, CV 30 %
	cur := []float64{600, 1300, 500, 800, 600}    // mean 760
	row := Row(Builtins()[0], Side{Present: true, Whole: 1000, Values: base}, Side{Present: true, Whole: 760, Values: cur}, Repetitions)
	// U = 6 with a tie of three 600s: z = (6 − 12.5 + 0.5)/√22.3611 = −1.26883, p = 0.10225
	if row.Decision != v1alpha1.ComparisonSuccess || row.RatioPercent != "76.00" || row.PValue != "0.1023" ||
		row.Note != "worse than the success edge but p 0.1023 ≥ 0.05: may be noise" {
		t.Fatalf("%+v", row)
	}
}

// A run whose mean is beyond the ok edge, and surely worse than the baseline, but not surely
// beyond the edge, is ok, not regressed: CI's same-backend comparison on a loaded machine drew
// target CPU 123 % (15 → 19 millicores) with p 0.039 against the baseline itself.
func TestJustBeyondTheOKEdgeIsNotARegression(t *testing.T) {
	cpu := Builtins()[4]
	base := []float64{9, 9.6, 10, 10.2, 10.4, 10.8}      // mean 10
	cur := []float64{11.5, 11.9, 12.3, 12.5, 12.7, 12.9} // mean 12.3: 123 %, every one above every baseline
	row := Row(cpu, Side{Present: true, Whole: 10, Values: base}, Side{Present: true, Whole: 12.3, Values: cur}, Repetitions)
	// No ties: exact. Against the baseline, U = 0: p = 1/C(12,6) = 1/924. Against the baseline
	// × 1.2 (10.8, 11.52, 12, 12.24, 12.48, 12.96), 14 of the 36 pairs have the scaled baseline
	// above the run: p = P(U ≤ 14) = 272/924.
	if row.Decision != v1alpha1.ComparisonOK || row.RatioPercent != "123.00" || row.PValue != "0.0011" ||
		row.Note != "beyond the ok edge but p 0.2944 ≥ 0.05 that it is beyond 120 % of the baseline: may be run-to-run drift" {
		t.Fatalf("%+v", row)
	}
	// Well beyond the edge it is regressed, with the p-value of the edge's test.
	far := []float64{14.5, 14.9, 15.3, 15.5, 15.7, 15.9}
	row = Row(cpu, Side{Present: true, Whole: 10, Values: base}, Side{Present: true, Whole: 15.3, Values: far}, Repetitions)
	if row.Decision != v1alpha1.ComparisonRegressed || row.PValue != "0.0011" {
		t.Fatalf("%+v", row)
	}
}
