package compare

import (
	"fmt"
	"math"
	"sort"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// The family of rows. A comparison tests 5 to 32 rows (a CapacityPlan 4 a cell, over every
// cell); each tested alone at Alpha, some row of an A/A comparison is beyond its ok edge by
// chance far more often than Alpha says. So the rows' tests of the ok edge are corrected
// together with Holm's step-down procedure, which bounds the chance that any row is Regressed
// when none is worse than its ok edge by Alpha, whatever the dependence between the rows
// (rows of one run share its noise). The family is every tested row, not only those beyond
// the ok edge: a family chosen by looking at the data would not bound the rate. OK rows,
// which do not block a verdict, keep the test of their own row at Alpha.
//
// The correction asks more of a row than Alpha: the most significant of m rows needs
// p < Alpha/m, and a test of few blocks (30 windows at autocorrelation 0.8) or repetitions
// (5 a side give at best 1/252) may not reach that whatever the data. Such a row, beyond its
// ok edge and significant alone, is TooFewSamples, not OK: passing it would claim more than
// the data says, and undecided rows never pass a run.

// Judged is one row judged alone: everything but the decision among Success, OK and
// Regressed. Judge makes it; Decide decides a family of them.
type Judged struct {
	row    v1alpha1.MetricComparison
	metric Metric
	kind   Kind
	// tested is false for NoData and TooFewSamples rows: final as they are, and no member of
	// the family.
	tested bool
	// why is the note's text before the decision's own.
	why string
	// p and pOK are the tests of the success and the ok edge; minP the smallest p the test can
	// give with n's blocks a side.
	p, pOK, minP float64
	n            [2]int
	// beyondSuccess and beyondOK place the whole-run ratio in the bands.
	beyondSuccess, beyondOK bool
}

// Decide decides a family of rows judged alone (Judge): a comparison's rows, or a
// CapacityPlan's over all its cells. A row is Regressed only when its ratio is beyond the ok
// edge and its test of that edge survives Holm's correction over the tested rows. One the
// correction holds back is TooFewSamples when its test cannot reach Alpha/m with its blocks,
// else OK when significantly beyond the success edge (else Success); its note says which. Every decision is the lesser of what the whole-run ratio and the test say
// (bandVsTest). Pure and deterministic; the rows keep their order.
func Decide(rows []Judged) []v1alpha1.MetricComparison { return decide(rows, true) }

// decide without holm decides each row as a family of one, as every row was before issue 39
// (BenchmarkGateAAFalseAlarms measures both).
func decide(rows []Judged, holm bool) []v1alpha1.MetricComparison {
	adjusted, family := make([]float64, len(rows)), 1
	for i, j := range rows {
		adjusted[i] = j.pOK
	}
	if holm {
		adjusted, family = holmAdjusted(rows)
	}
	out := make([]v1alpha1.MetricComparison, len(rows))
	for i, j := range rows {
		out[i] = decideRow(j, adjusted[i], family)
	}
	return out
}

// holmAdjusted is each tested row's Holm-adjusted p-value of its ok edge's test, and how many
// rows were tested. In increasing order of p, the k-th of m (from 0) is
// max over j ≤ k of min(1, (m−j)·p_j): a row survives the correction at Alpha exactly when
// this is below Alpha. Ties keep the rows' order, so the result is deterministic.
func holmAdjusted(rows []Judged) ([]float64, int) {
	adjusted := make([]float64, len(rows))
	var order []int
	for i, j := range rows {
		adjusted[i] = math.NaN()
		if j.tested {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return rows[order[a]].pOK < rows[order[b]].pOK })
	m, running := len(order), 0.0
	for k, i := range order {
		running = max(running, min(1, float64(m-k)*rows[i].pOK))
		adjusted[i] = running
	}
	return adjusted, m
}

// decideRow decides one row given its ok edge's adjusted p-value in a family of family rows.
func decideRow(j Judged, adjustedOK float64, family int) v1alpha1.MetricComparison {
	row := j.row
	if !j.tested {
		return row
	}
	m, why := j.metric, j.why
	row.PValue = pValue(j.p)
	held := j.beyondOK && j.pOK < Alpha && adjustedOK >= Alpha // significant alone, not in the family
	switch {
	case j.beyondOK && adjustedOK < Alpha:
		row.Decision = v1alpha1.ComparisonRegressed
		row.PValue = pValue(j.pOK)
		if family > 1 {
			why = join(why, fmt.Sprintf("significant after Holm's correction over %d rows (adjusted p %s)", family, pValue(adjustedOK)))
		}
	case held && j.minP*float64(family) >= Alpha:
		row.Decision = v1alpha1.ComparisonTooFewSamples
		row.PValue = pValue(j.pOK)
		unit := "blocks"
		if j.kind == Repetitions {
			unit = "repetitions"
		}
		why = join(why, fmt.Sprintf("p %s beyond the ok edge alone, but Holm's correction over %d rows asks p < %.4f of the most significant "+
			"and %d vs %d %s give at best %.4f: no decision; more samples a side decide", pValue(j.pOK), family, Alpha/float64(family),
			j.n[0], j.n[1], unit, j.minP))
	case j.beyondSuccess && j.p < Alpha:
		row.Decision = v1alpha1.ComparisonOK
		switch {
		case held:
			why = join(why, holmNote(j.pOK, adjustedOK, family))
		case j.beyondOK:
			why = join(why, fmt.Sprintf("beyond the ok edge but p %s ≥ %.2f that it is beyond %.0f %% of the baseline: may be run-to-run drift",
				pValue(j.pOK), Alpha, m.OKPercent))
		}
	default:
		row.Decision = v1alpha1.ComparisonSuccess
		if held {
			why = join(why, holmNote(j.pOK, adjustedOK, family))
		}
		if j.beyondSuccess {
			why = join(why, fmt.Sprintf("worse than the success edge but p %s ≥ %.2f: may be noise", row.PValue, Alpha))
		}
	}
	why = join(why, bandVsTest(j, adjustedOK))
	row.Note = truncate(join(m.Note, why), 512)
	return row
}

func holmNote(pOK, adjusted float64, family int) string {
	return fmt.Sprintf("p %s beyond the ok edge, not significant after Holm's correction over %d rows (adjusted p %s ≥ %.2f)",
		pValue(pOK), family, pValue(adjusted), Alpha)
}

// bandVsTest says when the test places the run further out than the whole-run ratio does. The
// ratio is of whole-run values (a run's p95 over all its requests); the test ranks block means
// of per-window values (the mean of its windows' p95s), and for a quantile, or a run with a
// burst, the two can disagree. Neither alone decides: a row is the lesser of the band the
// ratio is in and the band the test shows the run significantly beyond. The other way round
// (the ratio beyond an edge the test does not confirm) the decision's own note says so.
func bandVsTest(j Judged, adjustedOK float64) string {
	edge, p := "", 0.0
	switch {
	case !j.beyondOK && adjustedOK < Alpha:
		edge, p = "ok", j.pOK
	case !j.beyondSuccess && j.p < Alpha:
		edge, p = "success", j.p
	default:
		return ""
	}
	return fmt.Sprintf("the %s are significantly beyond the %s edge (p %s) but the whole-run ratio is not: a row is the lesser of the two",
		j.kind, edge, pValue(p))
}

// FamilyNote says when the family is too large for its rows' samples: Holm's correction asks
// the most significant of m tested rows for p < Alpha/m, and a row whose test cannot give that
// (5 repetitions a side give at best 1/252) can never be Regressed. "" when every tested row
// can reach it.
func FamilyNote(rows []Judged) string {
	m := 0
	for _, j := range rows {
		if j.tested {
			m++
		}
	}
	short, worst := 0, Judged{}
	for _, j := range rows {
		if j.tested && j.minP >= Alpha/float64(m) {
			if short == 0 || j.minP > worst.minP {
				worst = j
			}
			short++
		}
	}
	if short == 0 {
		return ""
	}
	unit := "blocks"
	if worst.kind == Repetitions {
		unit = "repetitions"
	}
	verb := "rows cannot"
	if short == 1 {
		verb = "row cannot"
	}
	return fmt.Sprintf("Holm's correction over %d tested rows asks the most significant for p < %.4f; %d %s reach that "+
		"(%d vs %d %s give at best %.4f): add samples a side, or compare fewer rows", m, Alpha/float64(m), short, verb,
		worst.n[0], worst.n[1], unit, worst.minP)
}
