package compare

import (
	"sort"
	"strings"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// SubMetrics are the tag-filtered metric keys a run keeps in its Record, in
// measure.CanonicalSelector's form, so `{ name: "push" }` and `{name:push}` are one series.
type SubMetrics struct {
	// Named are those spec.baseline.metrics names: this comparison reads them.
	Named []string
	// Thresholds are the other sub-metrics of spec.thresholds: kept so that a later run can
	// compare on them with this run as its baseline.
	Thresholds []string
}

// SubMetricsOf lists the sub-metrics of spec.baseline.metrics and spec.thresholds, each once,
// in a fixed order (the spec's for the baseline's, sorted for the thresholds' map). The API
// bounds them: 16 baseline metrics and 32 threshold keys.
func SubMetricsOf(spec *v1alpha1.TestRunSpec) SubMetrics {
	var out SubMetrics
	seen := map[string]bool{}
	add := func(dst *[]string, key string) {
		if c, filtered, err := measure.CanonicalSelector(key); err == nil && filtered && !seen[c] {
			seen[c] = true
			*dst = append(*dst, c)
		}
	}
	if spec.Baseline != nil {
		for _, m := range spec.Baseline.Metrics {
			add(&out.Named, m.Name)
		}
	}
	keys := make([]string, 0, len(spec.Thresholds))
	for k := range spec.Thresholds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(&out.Thresholds, k)
	}
	return out
}

// isSubMetric says whether a series name carries a tag filter.
func isSubMetric(name string) bool { return strings.ContainsRune(name, '{') }

// subMetricSeries are the natural stats of the sub-metric key (canonical), whole and per
// window, or none when no sample matched (no data is not a value of 0).
//
// The whole-run value is the one spec.thresholds would judge: the merged aggregate of the
// matching series (measure.Summary.SubMetric, as the threshold evaluation reads it). Per
// window the summary keeps each series' stats, not its histograms, so:
//   - one matching series (the runners split by the filter's keys and measure.KeptTags, so a
//     sub-metric of a run without errors or with one scenario is one series): its windows;
//   - several (say status_class 2xx and 5xx): the additive stats are merged exactly per window
//     (a trend's avg from sums and counts, a counter's rate from sums, a rate from passes and
//     fails); quantiles and gauge values cannot be merged from per-window stats, so those
//     series keep the whole-run value only, and the comparison says TooFewSamples.
func subMetricSeries(key string, res *v1alpha1.Results, s *measure.Summary) []Series {
	_, m, agg, err := s.SubMetric(key)
	if err != nil || m == nil || agg.Count == 0 {
		return nil
	}
	whole := measure.ComputeStats(m.Type, &agg, s.Duration.Seconds())
	matched := s.MatchingSeries(key)
	windows, exact := mergedWindows(m.Type, matched), len(matched) == 1
	unit := ""
	if res != nil {
		for _, row := range res.Metrics {
			if row.Name == m.Name {
				unit = row.Unit
			}
		}
	}
	return statSeries(key, m.Type, whole, windows, exact, unit, s.Start, s.End, time.Duration(s.WindowNanos))
}

// mergedWindows are the series' windows in time order: one series' as they are; several
// series' with their additive stats summed (Count, Sum, Passes, Fails) and the avg and rate
// derived from them. The other stats of merged windows are left 0: statSeries does not read
// them.
func mergedWindows(typ measure.MetricType, series []*measure.SeriesSummary) []measure.WindowStats {
	if len(series) == 1 {
		return series[0].Windows
	}
	byStart := map[int64]*measure.Stats{}
	var starts []int64
	for _, sr := range series {
		for _, w := range sr.Windows {
			k := w.Start.UnixNano()
			st := byStart[k]
			if st == nil {
				st = &measure.Stats{}
				byStart[k] = st
				starts = append(starts, k)
			}
			st.Count += w.Stats.Count
			st.Sum += w.Stats.Sum
			st.Passes += w.Stats.Passes
			st.Fails += w.Stats.Fails
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	out := make([]measure.WindowStats, 0, len(starts))
	for _, k := range starts {
		st := byStart[k]
		if st.Count > 0 {
			st.Avg = st.Sum / float64(st.Count)
		}
		if typ == measure.Rate && st.Passes+st.Fails > 0 {
			st.Rate = float64(st.Passes) / float64(st.Passes+st.Fails)
		}
		out = append(out, measure.WindowStats{Start: time.Unix(0, k), Stats: *st})
	}
	return out
}

// subMetricNote says why a sub-metric's row has no decision when the reason is how records
// keep sub-metrics: a run records one only when its spec names it, and keeps only the whole
// run's value of a quantile merged from several series.
func subMetricNote(row v1alpha1.MetricComparison, m Metric, b, c *Series) v1alpha1.MetricComparison {
	if m.Builtin || !isSubMetric(m.Name) {
		return row
	}
	var why string
	switch {
	case b == nil && c != nil:
		why = "the baseline run did not record this sub-metric: a run records a sub-metric only when its " +
			"spec.baseline.metrics or spec.thresholds name it (or none of its samples carried these tags); " +
			"name it there in the run that will be the baseline"
	case b == nil || c == nil:
		return row
	case row.Decision == v1alpha1.ComparisonTooFewSamples && (len(b.Windows) == 0 || len(c.Windows) == 0):
		why = "only the whole-run value is kept: several series of the metric match the filter, and a " +
			"window's quantile cannot be merged from theirs; compare its avg (merged exactly per window), or add " +
			"the tags that split it (e.g. status_class) to the filter"
	default:
		return row
	}
	row.Note = truncate(join(m.Note, why), 512)
	return row
}
