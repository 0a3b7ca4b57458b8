package shift

import (
	"fmt"
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
