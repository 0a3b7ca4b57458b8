package htmlreport

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/columns"
)

// comparisonView is the "Compared with" section of a compared run: status.comparison, its
// table through the comparison columns defined once (pkg/present/columns), and why the
// baseline's series are not drawn when they are not.
type comparisonView struct {
	*v1alpha1.Comparison
	Header []cell
	Rows   []comparisonLine
	// DecisionClass styles the overall decision.
	DecisionClass string
	// SeriesMissing says why the baseline's series are not over the charts ("" when they are).
	SeriesMissing string
}

type comparisonLine struct {
	// Metric keys the row (data-row) for a test.
	Metric string
	Cells  []cell
}

// decisionClass styles a comparison decision as the report styles outcomes: Regressed as a
// failure, OK as a warning, Success as a pass, TooFewSamples and NoData muted (no decision).
func decisionClass(d v1alpha1.ComparisonDecision) string {
	switch d {
	case v1alpha1.ComparisonRegressed:
		return "fail-text"
	case v1alpha1.ComparisonOK:
		return "warn-text"
	case v1alpha1.ComparisonSuccess:
		return "pass-text"
	}
	return "muted"
}

// newComparisonView is nil without a comparison.
func newComparisonView(c *v1alpha1.Comparison, seriesMissing string) *comparisonView {
	if c == nil {
		return nil
	}
	cols := columns.ComparisonFor(columns.HTML)
	v := &comparisonView{Comparison: c, DecisionClass: decisionClass(c.Decision), SeriesMissing: seriesMissing}
	for _, col := range cols {
		v.Header = append(v.Header, cell{ID: col.ID, Name: col.Header(columns.HTML)})
	}
	for _, r := range columns.TestedRows(c) {
		line := comparisonLine{Metric: r.Metric.Name}
		if r.Metric.Stat != "" {
			line.Metric += " " + r.Metric.Stat
		}
		for _, col := range cols {
			x := cell{ID: col.ID, Value: col.Value(r)}
			switch col.ID {
			case columns.CmpBaseline, columns.CmpCurrent, columns.CmpRatio, columns.CmpPValue, columns.CmpCI:
				x.Num = true
			case columns.CmpDecision:
				x.Class = decisionClass(r.Metric.Decision)
			}
			line.Cells = append(line.Cells, x)
		}
		v.Rows = append(v.Rows, line)
	}
	return v
}
