package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// A baseline kept with 10 s windows (a script-only run before runners read the script's plan)
// against a run of the same length in 1 s windows: this run's windows are averaged in tens
// first, so both sides have 30 samples of 10 s; the target's samples are left alone.
func TestCompareBringsWindowsToOneWidth(t *testing.T) {
	base := run("b", 1, 1, 1, 1, 1)
	cur := run("c", 1, 1, 1, 1, 1)
	cur.WindowSeconds = 1
	for i := range cur.Series {
		if !isTarget(cur.Series[i].Name) {
			cur.Series[i] = series(cur.Series[i].Name, "", cur.Series[i].Unit, cur.Series[i].Whole, 300)
		}
	}
	got := Compare(v1alpha1.BaselineSpec{}, base, cur)
	for _, name := range []string{"throughput", "latencyP95", "latencyP99"} {
		r := rowOf(t, got, name)
		if r.BaselineSamples != 30 || r.CurrentSamples != 30 {
			t.Errorf("%s: %d vs %d samples, want 30 vs 30 (300 windows of 1 s in blocks of 10)", name, r.BaselineSamples, r.CurrentSamples)
		}
		if !strings.Contains(r.Note, "this run's 1 s windows averaged in blocks of 10 to the other run's 10 s") {
			t.Errorf("%s: note %q does not say the windows were averaged", name, r.Note)
		}
	}
	for _, name := range []string{"targetMemory", "targetCPU"} {
		if r := rowOf(t, got, name); r.CurrentSamples != 30 || strings.Contains(r.Note, "averaged") {
			t.Errorf("%s: %d samples, note %q: the target's samples are not windows", name, r.CurrentSamples, r.Note)
		}
	}
	// The other way round (the baseline's windows are the narrow ones), and a ratio under 2
	// (10 s against 8 s) left as it is.
	if r := rowOf(t, Compare(v1alpha1.BaselineSpec{}, cur, base), "throughput"); r.BaselineSamples != 30 || !strings.Contains(r.Note, "the baseline's 1 s windows") {
		t.Errorf("baseline of 1 s windows: %d samples, note %q", r.BaselineSamples, r.Note)
	}
	a, b := run("a", 1, 1, 1, 1, 1), run("b", 1, 1, 1, 1, 1)
	a.WindowSeconds = 8
	if r := rowOf(t, Compare(v1alpha1.BaselineSpec{}, a, b), "throughput"); r.BaselineSamples != 30 || r.CurrentSamples != 30 || r.Note != "" {
		t.Errorf("8 s against 10 s: %d vs %d samples, note %q: want them as they are", r.BaselineSamples, r.CurrentSamples, r.Note)
	}
}

// The reason: A/A comparisons of one process, its baseline in 10 s windows and the run in 1 s
// windows (autocorrelation 0.5 between seconds, 5 % noise), alarm about as often as alpha says
// once the widths agree. Tested as they were, a 1 s window varied more than a 10 s one and the
// test alarmed on 0.2 % of them: it could hardly see a difference either (86 % of 3 % drops,
// against 99 % aligned).
func TestMixedWidthsAlarmAsAlphaSays(t *testing.T) {
	const trials = 600
	alarms := 0
	for i := range trials {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		seconds := ar1(rng, 300, 1000, 0.05, 0.5)
		tens := make([]float64, 30)
		for j := range tens {
			tens[j] = meanOf(seconds[j*10 : j*10+10])
		}
		cur := ar1(rng, 300, 1000, 0.05, 0.5)
		base := Record{WindowSeconds: 10, Series: []Series{{Name: SeriesThroughput, Unit: "req/s", Whole: meanOf(tens), Windows: tens}}}
		now := Record{WindowSeconds: 1, Series: []Series{{Name: SeriesThroughput, Unit: "req/s", Whole: meanOf(cur), Windows: cur}}}
		switch rowOf(t, Compare(v1alpha1.BaselineSpec{}, base, now), "throughput").Decision {
		case v1alpha1.ComparisonOK, v1alpha1.ComparisonRegressed:
			alarms++
		}
	}
	rate := float64(alarms) / trials
	t.Logf("%.1f %% of %d A/A comparisons across widths alarm", 100*rate, trials)
	if rate < 0.03 || rate > 0.07 {
		t.Errorf("%.1f %% of A/A comparisons across widths alarm, want about alpha (5 %%)", 100*rate)
	}
}

// BenchmarkMixedWidthRates measures what sameWidth changes: throughput comparisons of a
// baseline in 10 s windows (30) against a run in 1 s windows (300) of one AR(1) process (5 %
// noise, autocorrelation 0.5 between seconds), the run at 100 % (A/A) and 97 % of the
// baseline, tested as they are and after sameWidth. Seeded: the same rates on every machine.
//
//	go test -run '^$' -bench BenchmarkMixedWidthRates -benchtime 1x ./pkg/judge/compare
func BenchmarkMixedWidthRates(b *testing.B) {
	const trials = 2000
	m := builtin(SeriesThroughput, "req/s", v1alpha1.HigherIsBetter)
	for range b.N {
		for _, level := range []float64{1, 0.97} {
			decided := map[bool]int{}
			for i := range trials {
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				seconds := ar1(rng, 300, 1000, 0.05, 0.5)
				tens := make([]float64, 30)
				for j := range tens {
					tens[j] = meanOf(seconds[j*10 : j*10+10])
				}
				cur := ar1(rng, 300, 1000*level, 0.05, 0.5)
				for _, aligned := range []bool{false, true} {
					bv, cv := tens, cur
					if aligned {
						bv, cv, _ = sameWidth(tens, cur, 10, 1)
					}
					row := Row(m, Side{Present: true, Whole: meanOf(tens), Values: bv}, Side{Present: true, Whole: meanOf(cur), Values: cv}, Windows)
					if row.Decision == v1alpha1.ComparisonOK || row.Decision == v1alpha1.ComparisonRegressed {
						decided[aligned]++
					}
				}
			}
			b.Logf("run at %.0f %% of the baseline: decided worse %.2f %% as they are, %.2f %% at one width",
				100*level, 100*float64(decided[false])/trials, 100*float64(decided[true])/trials)
		}
	}
}
