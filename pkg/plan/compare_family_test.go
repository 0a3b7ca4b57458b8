package plan

import (
	"fmt"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// spread are n repetitions of pushes/s whose levels differ from run to run by up to ±15 %
// around p (memory and safe devices steady): what the noise between runs looks like.
func spread(n int, p float64) []rep {
	steps := []float64{-0.15, 0.12, -0.05, 0.08, 0, 0.15, -0.12, 0.05}
	out := make([]rep, n)
	for i := range out {
		out[i] = rep{mem: 500, perDev: "0.013", pushes: fmt.Sprintf("%.2f", p*(1+steps[i%len(steps)])), safe: 1000}
	}
	return out
}

// TestComparePlansFamily: a plan's rows over all its cells are one family (issue 39 item 5).
// Repetitions are separate runs, so a drift between runs inside the repetitions' spread is
// not significant; and a row that is significant alone is Regressed only when it survives
// Holm's correction over every tested row of every cell.
func TestComparePlansFamily(t *testing.T) {
	four := func(r func(int, float64, float64, int64) []rep, n int, c2w2 float64) map[[2]string][]rep {
		return map[[2]string][]rep{{"C1", "1"}: r(n, 100, 50, 1000), {"C1", "2"}: r(n, 100, 50, 1000),
			{"C2", "1"}: r(n, 100, 50, 1000), {"C2", "2"}: r(n, c2w2, 50, 1000)}
	}
	for _, tc := range []struct {
		name      string
		base, cur map[[2]string][]rep
		want      v1alpha1.ComparisonDecision // the plan's and the pushes row's
		wantRow   v1alpha1.ComparisonDecision // the row's, when it differs
		inNote    string
		inMessage string
	}{{
		// Mean 78 % of the baseline, beyond the ok edge (80 %), but the repetitions of both
		// plans spread ±15 %: the test over them (between-run by construction) does not call
		// it beyond the edge. Passes before issue 39 too: repetitions were always the samples.
		name: "a drift between runs inside the repetitions' spread is not Regressed",
		base: map[[2]string][]rep{{"C1", "1"}: spread(5, 100)},
		cur:  map[[2]string][]rep{{"C1", "1"}: spread(5, 78)},
		want: v1alpha1.ComparisonOK, inNote: "beyond the ok edge but p",
	}, {
		// 4 cells × 4 rows: Holm asks the most significant for p < 0.05/16 = 0.0031, and 5
		// repetitions a side give at best 1/252 = 0.0040: the row cannot be decided, and the
		// plan is not Regressed (an undecided row fails nothing). Before, each row alone:
		// Regressed.
		name: "16 rows, 5 repetitions a side: a 30 % drop significant alone is undecided, and the message says why",
		base: four(reps, 5, 100), cur: four(reps, 5, 70),
		want: v1alpha1.ComparisonSuccess, wantRow: v1alpha1.ComparisonTooFewSamples,
		inNote: "p 0.0040 beyond the ok edge alone, but Holm's correction over 16 rows asks p < 0.0031 of the most significant " +
			"and 5 vs 5 repetitions give at best 0.0040: no decision",
		inMessage: "Holm's correction over 16 tested rows asks the most significant for p < 0.0031; 16 rows cannot reach that (5 vs 5 repetitions give at best 0.0040)",
	}, {
		name: "16 rows, 8 repetitions a side: the same drop survives the correction",
		base: four(reps, 8, 100), cur: four(reps, 8, 70),
		want: v1alpha1.ComparisonRegressed, inNote: "significant after Holm's correction over 16 rows (adjusted p 0.0012)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := ComparePlans(planWith("v1", tc.base), planWith("v2", tc.cur))
			last := c.Cells[len(c.Cells)-1]
			m := metric(last, "pushesPerSecond")
			wantRow := tc.want
			if tc.wantRow != "" {
				wantRow = tc.wantRow
			}
			if c.Decision != tc.want || m.Decision != wantRow || !strings.Contains(m.Note, tc.inNote) {
				t.Errorf("plan %s, pushes row %s note %q; want %s, row %s with %q", c.Decision, m.Decision, m.Note, tc.want, wantRow, tc.inNote)
			}
			if !strings.Contains(c.Message, tc.inMessage) || (tc.inMessage == "" && strings.Contains(c.Message, "Holm")) {
				t.Errorf("message %q, want %q", c.Message, tc.inMessage)
			}
			if len(c.Message) > maxMessage {
				t.Errorf("message of %d bytes", len(c.Message))
			}
		})
	}
}
