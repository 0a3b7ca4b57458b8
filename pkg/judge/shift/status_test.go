package shift

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/judge/compare"
)

// records are n runs r0…r(n-1) a minute apart whose p95 steps from 20 ms to 30 ms at run step
// (none when step ≥ n), with a little noise, and a steady throughput.
func records(n, step int) []compare.Record {
	var out []compare.Record
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		p95 := 20.0
		if i >= step {
			p95 = 30
		}
		p95 += 0.2 * float64(i%3-1)
		out = append(out, compare.Record{Run: compare.RunRef{Name: fmt.Sprint("r", i), CompletionTime: t0.Add(time.Duration(i) * time.Minute)},
			Series: []compare.Series{{Name: compare.SeriesThroughput, Whole: 40 + 0.1*float64(i%2)}, {Name: compare.SeriesLatencyP95, Stat: "p95", Whole: p95}}})
	}
	return out
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		name        string
		runs, step  int
		lastN       int
		shifts      int
		says, worst string
	}{
		{"a step within the last runs is named, for the worse", 10, 5, 5, 1, "1 change points within the last 5 of 10 runs, 1 for the worse", "latencyP95 p95 +"},
		{"a step before the last runs is not", 10, 5, 3, 0, "no change point within the last 3 of 10 runs", ""},
		{"no step", 10, 99, 10, 0, "no change point within the last 10 of 10 runs", ""},
		{"too few runs", 3, 1, 5, 0, "3 runs: a change point needs 2 on each side", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := records(tc.runs, tc.step)
			got := Status(Analyze(recs, nil, Options{}), tc.lastN, Options{}, []string{"1 kept record unreadable"})
			if int(got.Runs) != tc.runs || got.First != "r0" || got.Last != fmt.Sprint("r", tc.runs-1) || len(got.Shifts) != tc.shifts {
				t.Fatalf("status %+v, want %d runs r0…r%d with %d shifts", got, tc.runs, tc.runs-1, tc.shifts)
			}
			if !strings.Contains(got.Message, tc.says) || !strings.HasSuffix(got.Message, "; 1 kept record unreadable") {
				t.Errorf("message %q, want it to say %q and the note", got.Message, tc.says)
			}
			if tc.shifts > 0 {
				s := got.Shifts[0]
				if s.Run != fmt.Sprint("r", tc.step) || s.Direction != Worse || s.Metric != compare.SeriesLatencyP95 {
					t.Errorf("shift %+v, want latencyP95 worse from r%d", s, tc.step)
				}
			}
			if w := Worst(got); (tc.worst == "") != (w == "") || !strings.HasPrefix(w, tc.worst) {
				t.Errorf("Worst = %q, want it to start %q", w, tc.worst)
			}
			if !strings.HasPrefix(got.Method, "E-Divisive means over whole-run values, permutation test (199 permutations), p ≤ 0.01") {
				t.Errorf("method %q", got.Method)
			}
		})
	}
}
