package columns

import (
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// ComparisonRow is one compared metric: a row of status.comparison (Tested), or two runs'
// whole-run values set side by side from their status alone (pkg/present/sidebyside), where
// no test was made and Metric.Decision is only the band the ratio falls in.
type ComparisonRow struct {
	Metric v1alpha1.MetricComparison
	Tested bool
}

// ComparisonColumn is one column of seed 000's "Comparison of some data with later versions"
// table: the plugin's compare and get, the JUnit cases of compared metrics and the HTML report
// show a comparison through these.
type ComparisonColumn struct {
	// ID keys the column: the JSON output's field, the HTML cell's data-column.
	ID string
	// Name heads it for a reader (HTML, JUnit messages); Short in a terminal.
	Name, Short string
	// Fields are the JSON names of the MetricComparison fields the cell shows; a test checks
	// that every field of the API type is shown by some column.
	Fields []string
	In     Renderer
	Value  func(ComparisonRow) string
}

// Header is the column's name as r shows it.
func (c ComparisonColumn) Header(r Renderer) string {
	switch r {
	case Table, Printer:
		return c.Short
	case JUnit:
		return c.ID
	}
	return c.Name
}

// IDs of the comparison columns a renderer treats specially.
const (
	CmpMetric   = "metric"
	CmpBaseline = "baseline"
	CmpCurrent  = "current"
	CmpRatio    = "ratioPercent"
	CmpBand     = "band"
	CmpDecision = "decision"
	CmpCI       = "ci"
	CmpPValue   = "pValue"
)

// ComparisonColumns are the comparison table's columns, in seed 000's order: the metric, the
// two values, "% of previous", the band and the decision, then the statistics when a test was
// made.
var ComparisonColumns = []ComparisonColumn{
	{ID: CmpMetric, Name: "Metric", Short: "METRIC", Fields: []string{"name", "stat", "unit"}, In: Table | JUnit | HTML, Value: metricLabel},
	{ID: CmpBaseline, Name: "Baseline", Short: "BASELINE", Fields: []string{"baseline"}, In: Table | JUnit | HTML,
		Value: func(r ComparisonRow) string { return r.Metric.Baseline }},
	{ID: CmpCurrent, Name: "This run", Short: "CURRENT", Fields: []string{"current"}, In: Table | JUnit | HTML,
		Value: func(r ComparisonRow) string { return r.Metric.Current }},
	// Seed 000's own words for the ratio.
	{ID: CmpRatio, Name: "% of previous", Short: "% OF PREVIOUS", Fields: []string{"ratioPercent"}, In: Table | JUnit | HTML,
		Value: func(r ComparisonRow) string { return r.Metric.RatioPercent }},
	// The band's words say the direction (≤ lower is better, ≥ higher is better).
	{ID: CmpBand, Name: "Band", Short: "BAND", Fields: []string{"band", "direction"}, In: Table | JUnit | HTML,
		Value: func(r ComparisonRow) string { return r.Metric.Band }},
	{ID: CmpDecision, Name: "Decision", Short: "DECISION", Fields: []string{"decision"}, In: Table | JUnit | HTML, Value: decisionCell},
	{ID: CmpCI, Name: "95 % CI of the ratio", Short: "95% CI", Fields: []string{"ciLowPercent", "ciHighPercent"}, In: Table | JUnit | HTML, Value: ciCell},
	{ID: CmpPValue, Name: "p-value", Short: "P-VALUE", Fields: []string{"pValue"}, In: Table | JUnit | HTML,
		Value: func(r ComparisonRow) string { return r.Metric.PValue }},
	{ID: "samples", Name: "Samples (baseline / this run)", Short: "SAMPLES", Fields: []string{"baselineSamples", "currentSamples"},
		In: Table | JUnit | HTML, Value: samplesCell},
	{ID: "note", Name: "Note", Short: "NOTE", Fields: []string{"note"}, In: Table | JUnit | HTML,
		Value: func(r ComparisonRow) string { return r.Metric.Note }},
}

// ComparisonFor are the comparison columns r shows, in order.
func ComparisonFor(r Renderer) []ComparisonColumn {
	var out []ComparisonColumn
	for _, c := range ComparisonColumns {
		if c.In&r != 0 {
			out = append(out, c)
		}
	}
	return out
}

// Cells are the row's values by column ID.
func (r ComparisonRow) Cells(cols []ComparisonColumn) map[string]string {
	out := make(map[string]string, len(cols))
	for _, c := range cols {
		out[c.ID] = c.Value(r)
	}
	return out
}

// TestedRows are the rows of a comparison the controller made.
func TestedRows(c *v1alpha1.Comparison) []ComparisonRow {
	if c == nil {
		return nil
	}
	out := make([]ComparisonRow, len(c.Metrics))
	for i, m := range c.Metrics {
		out[i] = ComparisonRow{Metric: m, Tested: true}
	}
	return out
}

// metricLabel is the metric with its stat and unit: "throughput (req/s)",
// "http_req_duration{name:push} p95 (ms)".
func metricLabel(r ComparisonRow) string {
	m := r.Metric
	s := m.Name
	if m.Stat != "" {
		s += " " + m.Stat
	}
	if m.Unit != "" {
		s += " (" + m.Unit + ")"
	}
	return s
}

// untested are the words of a band outcome that no test backs: never "Regressed", which
// only a test may say.
var untested = map[v1alpha1.ComparisonDecision]string{
	v1alpha1.ComparisonSuccess:   "success (no test)",
	v1alpha1.ComparisonOK:        "ok (no test)",
	v1alpha1.ComparisonRegressed: "beyond ok band (no test)",
	v1alpha1.ComparisonNoData:    "no data",
}

func decisionCell(r ComparisonRow) string {
	if r.Tested {
		return string(r.Metric.Decision)
	}
	if s, ok := untested[r.Metric.Decision]; ok {
		return s
	}
	return "no test"
}

func ciCell(r ComparisonRow) string {
	lo, hi := r.Metric.CILowPercent, r.Metric.CIHighPercent
	if lo == "" && hi == "" {
		return ""
	}
	return "[" + orQ(lo) + ", " + orQ(hi) + "] %"
}

func samplesCell(r ComparisonRow) string {
	b, c := r.Metric.BaselineSamples, r.Metric.CurrentSamples
	if b == 0 && c == 0 {
		return ""
	}
	return itoa(b) + " / " + itoa(c)
}

func orQ(s string) string {
	if strings.TrimSpace(s) == "" {
		return "?"
	}
	return s
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// comparisonDecision is the TestRun's comparison decision, "" without a comparison.
func comparisonDecision(r *v1alpha1.TestRun) string {
	if c := r.Status.Comparison; c != nil {
		return string(c.Decision)
	}
	return ""
}
