package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// Synthetic runs where the truth is known, shared by the property tests and the benchmark.

// ar1 is n windows of an AR(1) series around mean with coefficient of variation cv and
// lag-1 autocorrelation phi: x_t = phi·x_(t−1) + sqrt(1−phi²)·e_t keeps the variance 1.
func ar1(rng *rand.Rand, n int, mean, cv, phi float64) []float64 {
	out := make([]float64, n)
	x := rng.NormFloat64()
	for i := range out {
		x = phi*x + math.Sqrt(1-phi*phi)*rng.NormFloat64()
		out[i] = mean * (1 + cv*x)
	}
	return out
}

func meanOf(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// scenario describes one simulated comparison of throughput.
type scenario struct {
	kind  Kind
	n     int     // windows or repetitions a side
	cv    float64 // noise
	phi   float64 // autocorrelation of windows (0 for repetitions)
	ratio float64 // current mean / baseline mean (1 for A/A)
}

// simulate runs trials comparisons and returns the share decided OK or Regressed (an alarm),
// and the share decided Regressed.
func simulate(sc scenario, trials int, seed uint64) (alarm, regressed float64) {
	rng := rand.New(rand.NewPCG(seed, 26))
	m := Builtins()[0] // throughput, seed 000's bands
	var nAlarm, nReg int
	for range trials {
		var base, cur []float64
		if sc.kind == Windows {
			base, cur = ar1(rng, sc.n, 1000, sc.cv, sc.phi), ar1(rng, sc.n, 1000*sc.ratio, sc.cv, sc.phi)
		} else {
			base, cur = ar1(rng, sc.n, 1000, sc.cv, 0), ar1(rng, sc.n, 1000*sc.ratio, sc.cv, 0)
		}
		row := Row(m, Side{Present: true, Whole: meanOf(base), Values: base},
			Side{Present: true, Whole: meanOf(cur), Values: cur}, sc.kind)
		switch row.Decision {
		case v1alpha1.ComparisonRegressed:
			nReg++
			nAlarm++
		case v1alpha1.ComparisonOK:
			nAlarm++
		}
	}
	return float64(nAlarm) / float64(trials), float64(nReg) / float64(trials)
}

// BenchmarkDecisionRates measures the decision, not its speed: false alarms on A/A
// comparisons and detection of 10 % and 20 % throughput drops, within a run (30 AR(1)
// windows a side, 5 % CV, autocorrelation 0.5) and across runs (5 repetitions a side, 9 %
// CV). Seeded: the numbers are the same on every machine.
//
//	go test -run '^$' -bench BenchmarkDecisionRates ./pkg/judge/compare
func BenchmarkDecisionRates(b *testing.B) {
	const trials = 10000
	cases := []struct {
		name string
		sc   scenario
	}{
		{"windows30_cv5_ar0.5", scenario{kind: Windows, n: 30, cv: 0.05, phi: 0.5}},
		// the same without autocorrelation, and with much more of it: the limits
		{"windows30_cv5_ar0", scenario{kind: Windows, n: 30, cv: 0.05}},
		{"windows30_cv5_ar0.8", scenario{kind: Windows, n: 30, cv: 0.05, phi: 0.8}},
		{"repetitions5_cv9", scenario{kind: Repetitions, n: 5, cv: 0.09}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var aa, d10, d20, r20, r30 float64
			for b.Loop() {
				sc := c.sc
				sc.ratio = 1
				aa, _ = simulate(sc, trials, 1)
				sc.ratio = 0.9
				d10, _ = simulate(sc, trials, 2)
				sc.ratio = 0.8
				d20, r20 = simulate(sc, trials, 3)
				sc.ratio = 0.7
				_, r30 = simulate(sc, trials, 4)
			}
			b.ReportMetric(100*aa, "%false-alarm-AA")
			b.ReportMetric(100*d10, "%detect-10%drop")
			b.ReportMetric(100*d20, "%detect-20%drop")
			// A true 20 % drop sits on the ok edge: Regressed is the edge test's false alarm.
			b.ReportMetric(100*r20, "%regressed-20%drop")
			b.ReportMetric(100*r30, "%regressed-30%drop")
		})
	}
}

// BenchmarkCompareLargest is the most work one comparison can cost: 32 rows of 100,000
// windows a side (merged to 4096, tested in at most 512 blocks a side).
//
//	go test -run '^$' -bench BenchmarkCompareLargest ./pkg/judge/compare
func BenchmarkCompareLargest(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	var spec v1alpha1.BaselineSpec
	base, cur := Record{}, Record{}
	for i := range MaxRows {
		name := "m" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		spec.Metrics = append(spec.Metrics, v1alpha1.ComparedMetric{Name: name, Stat: "avg"})
		bw, cw := ar1(rng, 100_000, 100, 0.05, 0.5), ar1(rng, 100_000, 101, 0.05, 0.5)
		base.Series = append(base.Series, Series{Name: name, Stat: "avg", Whole: meanOf(bw), Windows: bw})
		cur.Series = append(cur.Series, Series{Name: name, Stat: "avg", Whole: meanOf(cw), Windows: cw})
	}
	for b.Loop() {
		if c := Compare(spec, base, cur); len(c.Metrics) != MaxRows {
			b.Fatalf("%d rows", len(c.Metrics))
		}
	}
}
