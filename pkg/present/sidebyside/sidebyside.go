// Package sidebyside sets two runs' whole-run values side by side from their status alone, with
// seed 000's bands, for `kubectl fleetbench compare A B` when B was not compared with A by the
// controller (no spec.baseline naming A). It makes no test of significance: it has one number
// a side, so its rows say which band the ratio falls in, never that a run regressed. It makes
// no client calls.
package sidebyside

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/present/columns"
)

// Method says what these rows are, for the plugin's output.
const Method = "none (no significance test): one whole-run value a side, judged by seed 000's bands on their ratio"

// metric reads one whole-run value of a TestRun: ok false when the run has none.
type metric struct {
	name, unit string
	dir        v1alpha1.Direction
	read       func(*v1alpha1.TestRun) (float64, string, bool)
}

// Metrics are the whole-run values compared, in the table's order.
var metrics = []metric{
	{"throughput", "req/s", v1alpha1.HigherIsBetter, func(r *v1alpha1.TestRun) (float64, string, bool) {
		if res := r.Status.Results; res != nil && res.Throughput != nil {
			return number(res.Throughput.RequestsPerSecond)
		}
		return 0, "", false
	}},
	{"latencyP95", "ms", v1alpha1.LowerIsBetter, latency(func(l *v1alpha1.Latency) string { return l.P95 })},
	{"latencyP99", "ms", v1alpha1.LowerIsBetter, latency(func(l *v1alpha1.Latency) string { return l.P99 })},
	{"targetMemory", "MiB", v1alpha1.LowerIsBetter, func(r *v1alpha1.TestRun) (float64, string, bool) {
		if t := r.Status.Target; t != nil && t.Memory != nil && t.Memory.PeakMiB > 0 {
			return float64(t.Memory.PeakMiB), strconv.FormatInt(t.Memory.PeakMiB, 10), true
		}
		return 0, "", false
	}},
	// Seed 000 gives memory per device in KiB; status keeps MiB.
	{"memoryPerDevice", "KiB", v1alpha1.LowerIsBetter, func(r *v1alpha1.TestRun) (float64, string, bool) {
		if t := r.Status.Target; t != nil && t.Memory != nil {
			if v, _, ok := number(t.Memory.PerDeviceMiB); ok {
				return v * 1024, fmt.Sprintf("%.2f", v*1024), true
			}
		}
		return 0, "", false
	}},
	{"targetCPU", "cores per core", v1alpha1.LowerIsBetter, func(r *v1alpha1.TestRun) (float64, string, bool) {
		if t := r.Status.Target; t != nil && t.CPU != nil {
			return number(t.CPU.AverageCoresPerCore)
		}
		return 0, "", false
	}},
}

// Rows are baseline's and current's whole-run values, a row per metric either has. The
// decision of a row is the band its ratio falls in (Success, OK, Regressed for beyond ok),
// or NoData; the rows are untested, so the columns show it as e.g. "ok (no test)".
func Rows(baseline, current *v1alpha1.TestRun) []columns.ComparisonRow {
	var out []columns.ComparisonRow
	for _, m := range metrics {
		bv, bs, bok := m.read(baseline)
		cv, cs, cok := m.read(current)
		if !bok && !cok {
			continue
		}
		mc := v1alpha1.MetricComparison{Name: m.name, Unit: m.unit, Direction: m.dir, Baseline: bs, Current: cs, Band: Band(m.dir)}
		switch {
		case !bok:
			mc.Decision, mc.Note = v1alpha1.ComparisonNoData, "the baseline has no value"
		case !cok:
			mc.Decision, mc.Note = v1alpha1.ComparisonNoData, "this run has no value"
		case bv <= 0:
			mc.Decision, mc.Note = v1alpha1.ComparisonNoData, "the baseline's value is 0: no ratio"
		default:
			ratio := cv / bv * 100
			mc.RatioPercent = fmt.Sprintf("%.2f", ratio)
			mc.Decision = band(m.dir, ratio)
		}
		out = append(out, columns.ComparisonRow{Metric: mc})
	}
	return out
}

// Band is seed 000's band in words, as status.comparison spells it.
func Band(d v1alpha1.Direction) string { return compare.NewMetric("", "", d).Band() }

// band is the band ratio (current in % of baseline) falls in under seed 000's rule; with no
// test behind it, beyond the ok edge reads Regressed only as a band (the columns add "no test").
func band(d v1alpha1.Direction, ratio float64) v1alpha1.ComparisonDecision {
	switch beyondSuccess, beyondOK := compare.NewMetric("", "", d).Beyond(ratio); {
	case !beyondSuccess:
		return v1alpha1.ComparisonSuccess
	case !beyondOK:
		return v1alpha1.ComparisonOK
	}
	return v1alpha1.ComparisonRegressed
}

// number parses a status number ("4.66"); the text is shown as status has it.
func number(s string) (float64, string, bool) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if s == "" || err != nil {
		return 0, "", false
	}
	return v, s, true
}

// latency parses a status latency ("41.7ms", "1.20s") into milliseconds.
func latency(f func(*v1alpha1.Latency) string) func(*v1alpha1.TestRun) (float64, string, bool) {
	return func(r *v1alpha1.TestRun) (float64, string, bool) {
		res := r.Status.Results
		if res == nil || res.Latency == nil {
			return 0, "", false
		}
		d, err := time.ParseDuration(strings.TrimSpace(f(res.Latency)))
		if err != nil {
			return 0, "", false
		}
		ms := float64(d) / float64(time.Millisecond)
		return ms, strconv.FormatFloat(ms, 'f', -1, 64), true
	}
}

// Untested is a row of a comparison shown without its test (two CapacityPlans side by side
// when neither names the other as its baseline): the band the ratio falls in, no interval,
// p-value or samples; a row without a ratio keeps its NoData and note.
func Untested(m v1alpha1.MetricComparison) columns.ComparisonRow {
	out := v1alpha1.MetricComparison{Name: m.Name, Stat: m.Stat, Unit: m.Unit, Direction: m.Direction, Baseline: m.Baseline, Current: m.Current,
		RatioPercent: m.RatioPercent, Band: Band(m.Direction), Decision: v1alpha1.ComparisonNoData}
	ratio, err := strconv.ParseFloat(m.RatioPercent, 64)
	if err != nil {
		out.Note = m.Note
		return columns.ComparisonRow{Metric: out}
	}
	out.Decision = band(m.Direction, ratio)
	return columns.ComparisonRow{Metric: out}
}
