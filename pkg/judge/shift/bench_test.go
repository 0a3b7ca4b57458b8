package shift

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// setting is one detector the benchmark measures.
type setting struct {
	name string
	o    Options
}

var benchSettings = []setting{
	{"fleetbench default (permutation, p 0.01, 199 perms)", Options{}},
	{"Otava defaults (t-test, p 0.001)", Options{Test: TTest, PValue: OtavaPValue}},
	{"permutation at Otava's p 0.001 (999 perms)", Options{PValue: OtavaPValue, Permutations: 999}},
	{"permutation, p 0.05 (199 perms)", Options{PValue: 0.05}},
}

// rates of one setting on one kind of series: detected is the share of shifted series with a
// change point within ±1 run of the true one; falsePositive the share of unshifted series
// with any change point.
type rates struct{ detected, falsePositive float64 }

// measure runs the setting over trials seeded series of n runs with noise cv: shifted by
// shift from n/2 on, or not at all (shift 0: only falsePositive is measured).
func measure(o Options, n int, cv, shift float64, trials int) rates {
	hits, fps := 0, 0
	for i := range trials {
		seed := uint64(i)*1_000_003 + uint64(n)*101 + uint64(cv*1e4)*7 + uint64(shift*1e4)
		if shift == 0 {
			if len(Detect(series(seed, n, 1000, cv, 0), v1alpha1.LowerIsBetter, o)) > 0 {
				fps++
			}
			continue
		}
		for _, cp := range Detect(series(seed, n, 1000, cv, shift, n/2), v1alpha1.LowerIsBetter, o) {
			if abs(cp.Index-n/2) <= 1 {
				hits++
				break
			}
		}
	}
	return rates{detected: float64(hits) / float64(trials), falsePositive: float64(fps) / float64(trials)}
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// BenchmarkShiftDetection measures detection of 5, 10 and 20 % shifts at noise CV 2, 5 and
// 10 %, and false positives on series without a shift, on 20 runs (a namespace's kept
// records) and 50 (Otava's window), for fleetbench's default, Otava's and the permutation
// test at Otava's p. It prints the table in hack/bench/BASELINES.md and fails when a rate
// leaves a loose band around it. Seeded: the same table every run.
//
//	go test ./pkg/judge/shift -run '^$' -bench BenchmarkShiftDetection -benchtime 1x
func BenchmarkShiftDetection(b *testing.B) {
	const trials = 300
	type row struct {
		n         int
		cv, shift float64
	}
	var rows []row
	for _, n := range []int{20, 50} {
		for _, cv := range []float64{0.02, 0.05, 0.10} {
			for _, shift := range []float64{0.05, 0.10, 0.20, 0} {
				rows = append(rows, row{n, cv, shift})
			}
		}
	}
	got := map[string][]rates{}
	for b.Loop() {
		for _, s := range benchSettings {
			got[s.name] = got[s.name][:0]
			for _, r := range rows {
				got[s.name] = append(got[s.name], measure(s.o, r.n, r.cv, r.shift, trials))
			}
		}
	}
	var t strings.Builder
	fmt.Fprintf(&t, "| runs | noise CV | shift |")
	for _, s := range benchSettings {
		fmt.Fprintf(&t, " %s |", s.name)
	}
	fmt.Fprintf(&t, "\n|---|---|---|%s\n", strings.Repeat("---|", len(benchSettings)))
	for i, r := range rows {
		what := fmt.Sprintf("%.0f %%", r.shift*100)
		if r.shift == 0 {
			what = "none (false positives)"
		}
		fmt.Fprintf(&t, "| %d | %.0f %% | %s |", r.n, r.cv*100, what)
		for _, s := range benchSettings {
			x := got[s.name][i]
			v := x.detected
			if r.shift == 0 {
				v = x.falsePositive
			}
			fmt.Fprintf(&t, " %.1f %% |", v*100)
		}
		t.WriteString("\n")
	}
	b.Logf("%d series per cell\n%s", trials, t.String())

	edges := edgeCases(trials)
	b.Logf("20 runs, %d series per cell: a single run 30 %% off (any change point), a 20 %% shift in the last k runs (within ±1 run), heavy-tailed noise\n%s", trials, edges)

	def := got[benchSettings[0].name]
	for i, r := range rows {
		x := def[i]
		switch {
		case r.shift == 0 && x.falsePositive > 0.05:
			b.Errorf("%d runs, CV %.0f %%: false positives %.1f %%, want at most 5 %%", r.n, r.cv*100, x.falsePositive*100)
		case r.shift >= 0.2 && r.cv <= 0.05 && x.detected < 0.9:
			b.Errorf("%d runs, CV %.0f %%, shift %.0f %%: detected %.1f %%, want at least 90 %%", r.n, r.cv*100, r.shift*100, x.detected*100)
		case r.shift >= 0.1 && r.cv <= 0.02 && x.detected < 0.9:
			b.Errorf("%d runs, CV %.0f %%, shift %.0f %%: detected %.1f %%, want at least 90 %%", r.n, r.cv*100, r.shift*100, x.detected*100)
		}
	}
}

// edgeCases is the table of the gate's edge cases on 20 runs, for the first two settings: a
// single outlier, which should not be a change point, and a shift in the last few runs, which
// is what "did anything shift in the last N releases" asks about.
func edgeCases(trials int) string {
	var t strings.Builder
	t.WriteString("| noise CV | case |")
	for _, s := range benchSettings[:2] {
		fmt.Fprintf(&t, " %s |", s.name)
	}
	t.WriteString("\n|---|---|---|---|\n")
	for _, cv := range []float64{0.02, 0.05} {
		for _, k := range []int{0, 2, 3, 4} {
			what := fmt.Sprintf("20 %% shift in the last %d runs", k)
			if k == 0 {
				what = "one run 30 % off (false positives)"
			}
			fmt.Fprintf(&t, "| %.0f %% | %s |", cv*100, what)
			for _, s := range benchSettings[:2] {
				n := 0
				for i := range trials {
					seed := uint64(i)*7919 + uint64(cv*1e4) + uint64(k)*13
					if k == 0 {
						v := series(seed, 20, 1000, cv, 0)
						v[2+i%16] *= 1.3
						if len(Detect(v, v1alpha1.LowerIsBetter, s.o)) > 0 {
							n++
						}
						continue
					}
					for _, cp := range Detect(series(seed, 20, 1000, cv, 0.2, 20-k), v1alpha1.LowerIsBetter, s.o) {
						if abs(cp.Index-(20-k)) <= 1 {
							n++
							break
						}
					}
				}
				fmt.Fprintf(&t, " %.1f %% |", float64(n)/float64(trials)*100)
			}
			t.WriteString("\n")
		}
	}
	for _, shift := range []float64{0, 0.1} {
		what := "heavy tails: 10 % shift in the middle"
		if shift == 0 {
			what = "heavy tails: no shift (false positives)"
		}
		fmt.Fprintf(&t, "| 3 %%, 1 run in 10 at 5× | %s |", what)
		for _, s := range benchSettings[:2] {
			n := 0
			for i := range trials {
				v := heavyTailed(uint64(i)+31337, 20, shift)
				for _, cp := range Detect(v, v1alpha1.LowerIsBetter, s.o) {
					if shift == 0 || abs(cp.Index-10) <= 1 {
						n++
						break
					}
				}
			}
			fmt.Fprintf(&t, " %.1f %% |", float64(n)/float64(trials)*100)
		}
		t.WriteString("\n")
	}
	return t.String()
}

// heavyTailed is n values with 3 % noise, one value in ten (at random) with 5 times as much, as
// a run on a noisy node; shifted by shift from n/2 on.
func heavyTailed(seed uint64, n int, shift float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	v := make([]float64, n)
	for j := range v {
		x := rng.NormFloat64() * 0.03
		if rng.Float64() < 0.1 {
			x *= 5
		}
		v[j] = 1000 * (1 + x)
		if j >= n/2 {
			v[j] *= 1 + shift
		}
	}
	return v
}
