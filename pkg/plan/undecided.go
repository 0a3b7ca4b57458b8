package plan

import (
	"fmt"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
)

// Undecided names the cells a plan's comparison could not judge: those whose metrics decided
// nothing (the cell is TooFewSamples or NoData), each with the first of its rows that says
// why, as compare.Undecided names a TestRun's rows. A metric in neither plan does not make a
// cell undecided when another metric of it was judged. Nil when every cell was judged, or no
// baseline was compared.
func Undecided(c *v1alpha1.PlanComparison) []string {
	if c == nil || c.Baseline == nil {
		return nil
	}
	var out []string
	for _, cell := range c.Cells {
		if !undecidedCell(cell) {
			continue
		}
		// The rows that gave the cell its decision say why; the first one is enough.
		var why []v1alpha1.MetricComparison
		for _, m := range cell.Metrics {
			if m.Decision == cell.Decision {
				why = append(why, m)
			}
		}
		s := CellLabel(cell.Profile, cell.Values) + " " + string(cell.Decision)
		if rows := compare.Undecided(v1alpha1.Comparison{Metrics: why}); len(rows) > 0 {
			s = CellLabel(cell.Profile, cell.Values) + ": " + rows[0]
		}
		out = append(out, cutTo(s, maxUndecidedEntry))
	}
	return out
}

// maxUndecidedEntry bounds each named cell: a label of 4 sweep values may be 2 KiB, and the
// plan's status.message, which names 5 of them, holds 4 KiB.
const maxUndecidedEntry = 320

func undecidedCell(c v1alpha1.CellComparison) bool {
	return c.Decision == v1alpha1.ComparisonTooFewSamples || c.Decision == v1alpha1.ComparisonNoData
}

// undecidedTodo says why the comparison's cells were not judged and what to do; the baseline
// plan's own repetitions first, the commonest cause (its default is 1).
func undecidedTodo(c *v1alpha1.PlanComparison) string {
	need := compare.SamplesNeeded(compare.Alpha)
	tooFew, noData := false, false
	for _, cell := range c.Cells {
		tooFew = tooFew || cell.Decision == v1alpha1.ComparisonTooFewSamples
		noData = noData || cell.Decision == v1alpha1.ComparisonNoData
	}
	var todo []string
	switch r := c.Baseline.Repetitions; {
	case r > 0 && int(r) < need:
		what := "repetitions"
		if r == 1 {
			what = "repetition"
		}
		todo = append(todo, fmt.Sprintf("the baseline plan %s had %d %s; a rank test needs at least %d a side: run the baseline plan again with repetitions >= %d",
			c.Baseline.Name, r, what, need, need))
	case tooFew:
		todo = append(todo, fmt.Sprintf("a cell is judged only with %d or more repetitions that Succeeded a side: run again the plan whose repetitions failed", need))
	}
	if noData {
		todo = append(todo, "a cell the baseline plan lacks, or that measured nothing on a side, is not compared: name a baseline plan of the same profiles and sweep values")
	}
	return strings.Join(todo, "; ")
}

// undecided applies spec.baseline.onUndecided to a plan whose comparison left cells undecided,
// with the TestRun's rule (verdict.Undecided): d's verdict becomes INCONCLUSIVE (the default)
// or FAILED, or stays PASSED with Pass, and its message names the cells either way.
func undecided(d Decision, policy v1alpha1.BaselineOnUndecided, c *v1alpha1.PlanComparison) Decision {
	cells := Undecided(c)
	if len(cells) == 0 {
		return d
	}
	v, note := verdict.Undecided(cells, policy, "status.comparison.cells", undecidedTodo(c))
	d.Message += "; " + note
	if v != v1alpha1.VerdictPassed {
		d.Undecided = v
	}
	return d
}

// Verdict is the plan's verdict, which its conditions tell: FAILED unless every cell was
// measured; then REGRESSED when the comparison regressed, INCONCLUSIVE or FAILED when it left
// cells undecided (spec.baseline.onUndecided), else PASSED.
func (d Decision) Verdict() v1alpha1.Verdict {
	switch {
	case !d.AllMeasured:
		return v1alpha1.VerdictFailed
	case d.Regressed:
		return v1alpha1.VerdictRegressed
	case d.Undecided != "":
		return d.Undecided
	}
	return v1alpha1.VerdictPassed
}
