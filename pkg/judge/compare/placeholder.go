package compare

// TEMPORARY stand-in (issue 26): the statistics helper's Compare replaces this file at merge.
// It compares the whole-run values only, with seed 000's bands, and makes no test of noise.

import (
	"fmt"
	"strconv"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Compare judges current against baseline, metric by metric (placeholder: ratios of Whole).
func Compare(spec v1alpha1.BaselineSpec, baseline, current Record) v1alpha1.Comparison {
	dirs := map[string]v1alpha1.Direction{"throughput": v1alpha1.HigherIsBetter, "latencyP95": v1alpha1.LowerIsBetter,
		"latencyP99": v1alpha1.LowerIsBetter, "targetMemory": v1alpha1.LowerIsBetter, "targetCPU": v1alpha1.LowerIsBetter}
	for _, m := range spec.Metrics {
		d := m.Direction
		if d == "" {
			d = v1alpha1.LowerIsBetter
		}
		dirs[m.Name] = d
	}
	find := func(r Record, name string) *Series {
		for i := range r.Series {
			if r.Series[i].Name == name {
				return &r.Series[i]
			}
		}
		return nil
	}
	out := v1alpha1.Comparison{Decision: v1alpha1.ComparisonSuccess, Method: "placeholder: whole-run ratio against seed 000's bands, no test of noise"}
	rank := map[v1alpha1.ComparisonDecision]int{v1alpha1.ComparisonSuccess: 0, v1alpha1.ComparisonNoData: 1, v1alpha1.ComparisonOK: 2, v1alpha1.ComparisonRegressed: 3}
	for _, name := range []string{"throughput", "latencyP95", "latencyP99", "targetMemory", "targetCPU"} {
		dir := dirs[name]
		row := v1alpha1.MetricComparison{Name: name, Direction: dir, Decision: v1alpha1.ComparisonNoData}
		b, c := find(baseline, name), find(current, name)
		if b != nil && c != nil && b.Whole > 0 {
			ratio := c.Whole / b.Whole * 100
			row.Unit, row.Baseline, row.Current = c.Unit, strconv.FormatFloat(b.Whole, 'f', 2, 64), strconv.FormatFloat(c.Whole, 'f', 2, 64)
			row.RatioPercent = strconv.FormatFloat(ratio, 'f', 2, 64)
			row.BaselineSamples, row.CurrentSamples = int32(len(b.Windows)), int32(len(c.Windows))
			switch {
			case dir == v1alpha1.HigherIsBetter && ratio >= 100, dir == v1alpha1.LowerIsBetter && ratio <= 100:
				row.Decision = v1alpha1.ComparisonSuccess
			case dir == v1alpha1.HigherIsBetter && ratio >= 80, dir == v1alpha1.LowerIsBetter && ratio <= 120:
				row.Decision = v1alpha1.ComparisonOK
			default:
				row.Decision = v1alpha1.ComparisonRegressed
			}
			if rank[row.Decision] > rank[out.Decision] || out.Worst == "" {
				out.Worst = fmt.Sprintf("%s %s %% of baseline", name, row.RatioPercent)
			}
		}
		if rank[row.Decision] > rank[out.Decision] {
			out.Decision = row.Decision
		}
		out.Metrics = append(out.Metrics, row)
	}
	return out
}
