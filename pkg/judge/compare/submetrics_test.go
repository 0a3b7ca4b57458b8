package compare

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// taggedRun is a merged summary of http_req_duration (a Trend) split into one series per
// tag set, each with 20 windows of 10 s of 50 samples around its base latency, built with
// measure's own aggregates so sub-metric selection and the threshold evaluation read it as
// they read a real run's. raw keeps each series' samples per window.
type taggedSeries struct {
	tags map[string]string
	base float64
}

func taggedRun(series ...taggedSeries) (*measure.Summary, [][][]float64) {
	const windows, perWindow = 20, 50
	start := time.Unix(1_700_000_000, 0)
	width := 10 * time.Second
	s := &measure.Summary{Start: start, End: start.Add(windows * width), Duration: windows * width, WindowNanos: int64(width),
		Tags: append(append([]string(nil), measure.KeptTags...), "name"), Metrics: map[string]*measure.MetricSummary{}}
	m := &measure.MetricSummary{Name: "http_req_duration", Type: measure.Trend}
	rng := rand.New(rand.NewPCG(3, 4))
	var raw [][][]float64
	for _, ts := range series {
		var total measure.Agg
		sr := measure.SeriesSummary{Tags: ts.tags}
		var samples [][]float64
		for w := 0; w < windows; w++ {
			var win measure.Agg
			var vs []float64
			for i := 0; i < perWindow; i++ {
				v := ts.base * (1 + 0.3*rng.Float64())
				t := start.Add(time.Duration(w)*width + time.Duration(i)*time.Millisecond).UnixNano()
				win.Add(measure.Trend, v, t)
				total.Add(measure.Trend, v, t)
				vs = append(vs, v)
			}
			samples = append(samples, vs)
			sr.Windows = append(sr.Windows, measure.WindowStats{Start: start.Add(time.Duration(w) * width), Stats: measure.ComputeStats(measure.Trend, &win, width.Seconds())})
		}
		raw = append(raw, samples)
		sr.Agg, sr.Stats = total, measure.ComputeStats(measure.Trend, &total, s.Duration.Seconds())
		m.Series = append(m.Series, sr)
		m.Agg.Merge(total)
	}
	m.Stats = measure.ComputeStats(measure.Trend, &m.Agg, s.Duration.Seconds())
	s.Metrics[m.Name] = m
	return s, raw
}

func seriesOf(rec Record, name, stat string) *Series {
	for i := range rec.Series {
		if rec.Series[i].Name == name && rec.Series[i].Stat == stat {
			return &rec.Series[i]
		}
	}
	return nil
}

// thresholdValue is what spec.thresholds would judge for key and method.
func thresholdValue(t *testing.T, s *measure.Summary, key, expr string) float64 {
	t.Helper()
	r := s.EvaluateThresholds(map[string][]string{key: {expr}})
	if len(r) != 1 || r[0].Error != "" {
		t.Fatalf("threshold %s %s: %+v", key, expr, r)
	}
	return r[0].Value
}

func specWith(thresholds map[string]v1alpha1.ThresholdList, metrics ...string) *v1alpha1.TestRunSpec {
	spec := &v1alpha1.TestRunSpec{Thresholds: thresholds, Baseline: &v1alpha1.BaselineSpec{Name: "prev"}}
	for _, m := range metrics {
		spec.Baseline.Metrics = append(spec.Baseline.Metrics, v1alpha1.ComparedMetric{Name: m})
	}
	return spec
}

// A sub-metric named in spec.baseline.metrics or spec.thresholds is kept under its canonical
// name, its whole-run value the threshold evaluation's, its windows the one matching series'.
func TestRecordKeepsNamedSubMetricsWithTheirWindows(t *testing.T) {
	s, _ := taggedRun(
		taggedSeries{map[string]string{"name": "push", "expected_response": "true"}, 100},
		taggedSeries{map[string]string{"name": "home", "expected_response": "true"}, 10},
	)
	spec := specWith(map[string]v1alpha1.ThresholdList{"http_req_duration{name:home}": {"p(95)<500"}}, `http_req_duration{ name: "push" }`)
	subs := SubMetricsOf(spec)
	if len(subs.Named) != 1 || subs.Named[0] != "http_req_duration{name:push}" || len(subs.Thresholds) != 1 || subs.Thresholds[0] != "http_req_duration{name:home}" {
		t.Fatalf("SubMetricsOf = %+v", subs)
	}
	rec := BuildRecord(RunRef{Name: "a"}, &v1alpha1.Results{}, s, &judge.Timeline{WindowSeconds: 10}, subs)
	for _, c := range []struct {
		key, stat, expr, name string
		window                func(measure.Stats) float64
	}{
		{"http_req_duration{name:push}", "p95", "p(95)<1", "push", func(st measure.Stats) float64 { return st.P95 }},
		{"http_req_duration{name:push}", "med", "med<1", "push", func(st measure.Stats) float64 { return st.Med }},
		{"http_req_duration{name:home}", "avg", "avg<1", "home", func(st measure.Stats) float64 { return st.Avg }},
	} {
		sr := seriesOf(rec, c.key, c.stat)
		if sr == nil {
			t.Fatalf("no series %s/%s in %v", c.key, c.stat, names(rec))
		}
		if want := round6(thresholdValue(t, s, c.key, c.expr)); sr.Whole != want {
			t.Errorf("%s/%s whole = %v, want the threshold's %v", c.key, c.stat, sr.Whole, want)
		}
		var src measure.SeriesSummary
		for _, sr := range s.Metrics["http_req_duration"].Series {
			if sr.Tags["name"] == c.name {
				src = sr
			}
		}
		if len(sr.Windows) != 20 {
			t.Fatalf("%s/%s has %d windows, want 20", c.key, c.stat, len(sr.Windows))
		}
		for i, w := range src.Windows {
			if want := round6(c.window(w.Stats)); sr.Windows[i] != want {
				t.Errorf("%s/%s window %d = %v, want %v", c.key, c.stat, i, sr.Windows[i], want)
			}
		}
	}
	// After the built-ins, the named sub-metric comes first, the thresholds' last.
	if first := rec.Series[2].Name; first != "http_req_duration{name:push}" {
		t.Errorf("series %v: want the named sub-metric right after the built-ins", names(rec))
	}
	if last := rec.Series[len(rec.Series)-1].Name; last != "http_req_duration{name:home}" {
		t.Errorf("series %v: want the thresholds' sub-metric last", names(rec))
	}
}

// Several series matching the filter: the whole-run values are still the threshold's, the
// avg's windows are merged exactly, and the quantiles keep no windows (they cannot be merged
// from per-window stats), so Compare says TooFewSamples and why.
func TestRecordOfASubMetricOfSeveralSeries(t *testing.T) {
	s, raw := taggedRun(
		taggedSeries{map[string]string{"name": "push", "status_class": "2xx"}, 100},
		taggedSeries{map[string]string{"name": "push", "status_class": "5xx"}, 300},
		taggedSeries{map[string]string{"name": "home", "status_class": "2xx"}, 10},
	)
	rec := BuildRecord(RunRef{Name: "a"}, &v1alpha1.Results{}, s, &judge.Timeline{WindowSeconds: 10},
		SubMetricsOf(specWith(nil, "http_req_duration{name:push}")))
	p95, avg := seriesOf(rec, "http_req_duration{name:push}", "p95"), seriesOf(rec, "http_req_duration{name:push}", "avg")
	if p95 == nil || avg == nil {
		t.Fatalf("series missing: %v", names(rec))
	}
	if want := round6(thresholdValue(t, s, "http_req_duration{name:push}", "p(95)<1")); p95.Whole != want {
		t.Errorf("p95 whole = %v, want the threshold's %v", p95.Whole, want)
	}
	if len(p95.Windows) != 0 {
		t.Errorf("p95 of two series kept %d windows: a merged window quantile would be made up", len(p95.Windows))
	}
	if want := round6(thresholdValue(t, s, "http_req_duration{name:push}", "avg<1")); avg.Whole != want {
		t.Errorf("avg whole = %v, want the threshold's %v", avg.Whole, want)
	}
	if len(avg.Windows) != 20 {
		t.Fatalf("avg has %d windows, want 20", len(avg.Windows))
	}
	for w := range avg.Windows {
		sum, n := 0.0, 0
		for _, sr := range raw[:2] {
			for _, v := range sr[w] {
				sum, n = sum+v, n+1
			}
		}
		if want := sum / float64(n); math.Abs(avg.Windows[w]-want) > 1e-5*want {
			t.Errorf("avg window %d = %v, want the mean of both series' samples %v", w, avg.Windows[w], want)
		}
	}
	row := rowOf(t, Compare(v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{{Name: "http_req_duration{name:push}"}}}, rec, rec), "http_req_duration{name:push}")
	if row.Decision != v1alpha1.ComparisonTooFewSamples || !strings.Contains(row.Note, "only the whole-run value is kept") {
		t.Errorf("row %s %q, want TooFewSamples saying only the whole-run value is kept", row.Decision, row.Note)
	}
}

func names(rec Record) []string {
	var out []string
	for _, s := range rec.Series {
		out = append(out, s.Name+"/"+s.Stat)
	}
	return out
}

// A spec metric with a tag filter, written in any form, compares the sub-metric's series:
// a clear rise of its p95 is Regressed; a baseline that never recorded it is NoData with a
// note that says how to record it.
func TestCompareSubMetric(t *testing.T) {
	const key = "http_req_duration{name:push}"
	base, cur := run("base", 1, 1, 1, 1, 1), run("cur", 1, 1, 1, 1, 1)
	base.Series = append(base.Series, series(key, "p95", "ms", 100, 30), series(key, "avg", "ms", 50, 30))
	cur.Series = append(cur.Series, series(key, "p95", "ms", 150, 30), series(key, "avg", "ms", 50, 30))
	spec := v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{{Name: `http_req_duration{ name: "push" }`}}}

	row := rowOf(t, Compare(spec, base, cur), key)
	if row.Decision != v1alpha1.ComparisonRegressed || row.Stat != "p95" || row.RatioPercent == "" {
		t.Errorf("row %+v, want p95 Regressed", row)
	}
	spec.Metrics[0].Stat = "avg"
	if row := rowOf(t, Compare(spec, base, cur), key); row.Decision != v1alpha1.ComparisonSuccess {
		t.Errorf("avg row %+v, want Success", row)
	}
	// Without bands in the spec, seed 000's: a clear 10 % rise is OK, not Regressed.
	cur.Series = append(cur.Series, series(key, "p99", "ms", 220, 30))
	base.Series = append(base.Series, series(key, "p99", "ms", 200, 30))
	spec.Metrics[0].Stat = "p99"
	if row := rowOf(t, Compare(spec, base, cur), key); row.Decision != v1alpha1.ComparisonOK || row.Band != "success ≤ 100 %, ok ≤ 120 %" {
		t.Errorf("p99 row %s band %q, want OK in seed 000's band", row.Decision, row.Band)
	}
	// With the user's own bands.
	spec.Metrics[0].OKPercent = i32(105)
	if row := rowOf(t, Compare(spec, base, cur), key); row.Decision != v1alpha1.ComparisonRegressed || row.Band != "success ≤ 100 %, ok ≤ 105 %" {
		t.Errorf("p99 row %s band %q, want Regressed beyond ok ≤ 105 %%", row.Decision, row.Band)
	}
	spec.Metrics[0].OKPercent = nil

	spec.Metrics[0].Stat = ""
	row = rowOf(t, Compare(spec, run("base", 1, 1, 1, 1, 1), cur), key)
	if row.Decision != v1alpha1.ComparisonNoData || !strings.Contains(row.Note, "baseline run did not record this sub-metric") ||
		!strings.Contains(row.Note, "spec.baseline.metrics or spec.thresholds") {
		t.Errorf("row %s %q, want NoData saying the baseline did not record it and how to", row.Decision, row.Note)
	}
}
