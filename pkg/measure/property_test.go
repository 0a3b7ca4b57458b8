package measure

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"
	"time"
)

// exactQuantile is k6's TrendSink.P on the raw values.
func exactQuantile(sorted []float64, q float64) float64 {
	switch len(sorted) {
	case 0:
		return 0
	case 1:
		return sorted[0]
	}
	i := q * float64(len(sorted)-1)
	j, k := sorted[int(math.Floor(i))], sorted[int(math.Ceil(i))]
	return j + (k-j)*(i-math.Floor(i))
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// distributions produce positive latencies of different shapes, including
// ties (zero bucket, repeated values) and a heavy tail.
var distributions = map[string]func(r *rand.Rand) float64{
	"lognormal": func(r *rand.Rand) float64 { return math.Exp(r.NormFloat64()*1.2 + 3) },
	"uniform":   func(r *rand.Rand) float64 { return 1 + r.Float64()*999 },
	"bimodal": func(r *rand.Rand) float64 {
		if r.Intn(10) == 0 {
			return 900 + r.Float64()*200
		}
		return 5 + r.Float64()*3
	},
	"pareto":   func(r *rand.Rand) float64 { return 2 / math.Pow(1-r.Float64(), 1/1.5) },
	"discrete": func(r *rand.Rand) float64 { return float64(r.Intn(5) * 10) }, // includes zeros
	"tiny":     func(r *rand.Rand) float64 { return 1e-6 * (1 + r.Float64()) },
}

var quantiles = []float64{0, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1}

func TestHistogramQuantilesWithinAccuracy(t *testing.T) {
	worst := 0.0
	for seed := int64(1); seed <= 6; seed++ {
		for name, dist := range distributions {
			r := rand.New(rand.NewSource(seed))
			n := 1 + r.Intn(20000)
			vals := make([]float64, n)
			var a Agg
			for i := range vals {
				vals[i] = dist(r)
				a.Add(Trend, vals[i], int64(i))
			}
			sort.Float64s(vals)
			for _, q := range quantiles {
				got, want := a.Quantile(q), exactQuantile(vals, q)
				e := relErr(got, want)
				worst = max(worst, e)
				if e > RelativeAccuracy*1.0001 {
					t.Errorf("seed %d %s n=%d q=%g: got %g want %g (rel err %.4f%%)", seed, name, n, q, got, want, 100*e)
				}
			}
		}
	}
	t.Logf("worst relative quantile error: %.4f%% (stated %.2f%%)", 100*worst, 100*RelativeAccuracy)
}

func TestHistogramNegativeAndMixedValues(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	var vals []float64
	var a Agg
	for i := 0; i < 5000; i++ {
		v := -math.Exp(r.NormFloat64() + 2)
		vals = append(vals, v)
		a.Add(Trend, v, 0)
	}
	sort.Float64s(vals)
	for _, q := range quantiles {
		if e := relErr(a.Quantile(q), exactQuantile(vals, q)); e > RelativeAccuracy*1.0001 {
			t.Errorf("q=%g rel err %g", q, e)
		}
	}
}

// sample is one synthetic k6 sample.
type sample struct {
	metric string
	typ    MetricType
	tags   map[string]string
	t      int64
	v      float64
}

func randomStream(r *rand.Rand, n int, start time.Time, span time.Duration) []sample {
	scen := []string{"browse", "checkout"}
	dist := distributions["lognormal"]
	out := make([]sample, 0, n)
	for i := 0; i < n; i++ {
		ts := start.UnixNano() + r.Int63n(int64(span))
		sc := scen[r.Intn(len(scen))]
		ok := r.Intn(20) != 0
		class := "2xx"
		if !ok {
			class = "5xx"
		}
		tags := map[string]string{"scenario": sc, "expected_response": fmt.Sprint(ok), "status_class": class}
		out = append(out,
			sample{"http_req_duration", Trend, tags, ts, dist(r)},
			sample{"http_reqs", Counter, tags, ts, 1},
			sample{"data_received", Counter, map[string]string{"scenario": sc}, ts, float64(100 + r.Intn(900))},
			sample{"http_req_failed", Rate, tags, ts, map[bool]float64{true: 0, false: 1}[ok]},
			sample{"checks", Rate, map[string]string{"scenario": sc, "check": "status is 200"}, ts, map[bool]float64{true: 1, false: 0}[ok]},
		)
		if i%50 == 0 {
			out = append(out, sample{"vus", Gauge, nil, ts, float64(r.Intn(10) + 1)})
		}
	}
	return out
}

func collect(t testing.TB, name string, samples []sample, start, end time.Time, cfg CollectorConfig) Envelope {
	c := NewCollector(cfg, start)
	for _, s := range samples {
		c.Series(s.metric, s.typ, "", s.tags).Add(s.t, s.v)
	}
	e := c.Envelope(end)
	e.Runner, e.Final = name, true
	e.CPU.Cores = 1
	// Every property run also goes through the wire format.
	var b bytes.Buffer
	if err := Encode(&b, &e); err != nil {
		t.Fatal(err)
	}
	d, err := Decode(b.Bytes())
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return d
}

var propertyThresholds = map[string][]string{
	"http_req_duration":                          {"p(95)<50", "p(99)<=120", "avg<30", "med<20", "min>0", "max<1000", "p(99.9)<300"},
	"http_req_duration{expected_response:true}":  {"p(90)<40"},
	"http_req_duration{scenario:checkout}":       {"p(95)>45"},
	"http_req_failed":                            {"rate<0.05"},
	"http_reqs":                                  {"count>1000", "rate>10"},
	"checks{check:status is 200}":                {"rate>0.9"},
	"vus":                                        {"value<=10"},
	"data_received":                              {"count>0"},
	"http_req_duration{status_class:5xx}":        {"max<5000"},
	"http_req_duration{scenario:does-not-exist}": {"p(95)<1"},
}

// exactThreshold evaluates a threshold on the raw stream the way k6 would
// on one instance holding all samples.
func exactThreshold(t *testing.T, samples []sample, key, expr string, seconds float64) (float64, bool) {
	th, err := ParseThreshold(expr)
	if err != nil {
		t.Fatal(err)
	}
	name, filter, err := ParseMetricSelector(key)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	var typ MetricType
	var last float64
	var lastT int64 = math.MinInt64
	for _, s := range samples {
		if s.metric != name || !matches(s.tags, filter) {
			continue
		}
		typ = s.typ
		vals = append(vals, s.v)
		if s.t >= lastT {
			last, lastT = s.v, s.t
		}
	}
	if len(vals) == 0 {
		return 0, false
	}
	var sum float64
	nz := 0
	for _, v := range vals {
		sum += v
		if v != 0 {
			nz++
		}
	}
	sorted := append([]float64(nil), vals...)
	sort.Float64s(sorted)
	var lhs float64
	switch th.Method {
	case "count":
		lhs = sum
	case "rate":
		if typ == Counter {
			lhs = sum / seconds
		} else {
			lhs = float64(nz) / float64(len(vals))
		}
	case "value":
		lhs = last
	case "avg":
		lhs = sum / float64(len(vals))
	case "min":
		lhs = sorted[0]
	case "max":
		lhs = sorted[len(sorted)-1]
	case "med":
		lhs = exactQuantile(sorted, 0.5)
	case "p":
		lhs = exactQuantile(sorted, th.Percentile/100)
	}
	return lhs, true
}

func TestMergeOfRandomSplitEqualsWholeStream(t *testing.T) {
	worst := 0.0
	for seed := int64(1); seed <= 5; seed++ {
		r := rand.New(rand.NewSource(seed))
		start := time.Unix(1_700_000_003, 0)
		span := time.Duration(30+r.Intn(300)) * time.Second
		end := start.Add(span)
		stream := randomStream(r, 2000+r.Intn(8000), start, span)
		// One runner owns the vus gauge so "fleet VUs = sum over runners"
		// and "last value of the whole stream" coincide.
		parts := 1 + r.Intn(8)
		split := make([][]sample, parts)
		for _, s := range stream {
			p := r.Intn(parts)
			if s.metric == "vus" {
				p = 0
			}
			split[p] = append(split[p], s)
		}
		cfg := CollectorConfig{Window: 10 * time.Second, MaxWindows: 8 + r.Intn(40), MaxSeriesPerMetric: 50}
		envs := make([]Envelope, parts)
		for i, part := range split {
			envs[i] = collect(t, fmt.Sprintf("runner-%d", i), part, start, end, cfg)
		}
		merged, err := Merge(envs...)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := Merge(collect(t, "whole", stream, start, end, cfg))
		if err != nil {
			t.Fatal(err)
		}
		if !merged.Complete || merged.Duration != span {
			t.Fatalf("seed %d: complete=%v duration=%v want %v", seed, merged.Complete, merged.Duration, span)
		}

		// Exact per-metric, per-series and per-window counts.
		for name, wm := range whole.Metrics {
			mm := merged.Metrics[name]
			if mm == nil {
				t.Fatalf("seed %d: metric %s missing after merge", seed, name)
			}
			if mm.Agg.Count != wm.Agg.Count || mm.Agg.NonZero != wm.Agg.NonZero || mm.Agg.Min != wm.Agg.Min || mm.Agg.Max != wm.Agg.Max {
				t.Errorf("seed %d %s: merged %+v whole %+v", seed, name, mm.Stats, wm.Stats)
			}
			if relErr(mm.Agg.Sum, wm.Agg.Sum) > 1e-9 {
				t.Errorf("seed %d %s: sum %g vs %g", seed, name, mm.Agg.Sum, wm.Agg.Sum)
			}
			if len(mm.Series) != len(wm.Series) {
				t.Errorf("seed %d %s: %d series vs %d", seed, name, len(mm.Series), len(wm.Series))
			}
			for i := range wm.Series {
				if mm.Series[i].Agg.Count != wm.Series[i].Agg.Count {
					t.Errorf("seed %d %s %v: count %d vs %d", seed, name, wm.Series[i].Tags, mm.Series[i].Agg.Count, wm.Series[i].Agg.Count)
				}
			}
			if len(mm.Windows) != len(wm.Windows) {
				t.Fatalf("seed %d %s: %d windows vs %d", seed, name, len(mm.Windows), len(wm.Windows))
			}
			var windowTotal uint64
			for i := range wm.Windows {
				if mm.Windows[i].Stats.Count != wm.Windows[i].Stats.Count || !mm.Windows[i].Start.Equal(wm.Windows[i].Start) {
					t.Errorf("seed %d %s window %d differs", seed, name, i)
				}
				windowTotal += wm.Windows[i].Stats.Count
			}
			if windowTotal != wm.Agg.Count {
				t.Errorf("seed %d %s: windows hold %d samples, total %d", seed, name, windowTotal, wm.Agg.Count)
			}
			if len(wm.Windows) > cfg.MaxWindows {
				t.Errorf("seed %d %s: %d windows exceed cap %d", seed, name, len(wm.Windows), cfg.MaxWindows)
			}
		}

		// Quantiles of merged data against exact quantiles of the stream.
		var durs []float64
		for _, s := range stream {
			if s.metric == "http_req_duration" {
				durs = append(durs, s.v)
			}
		}
		sort.Float64s(durs)
		md := merged.Metrics["http_req_duration"]
		for _, q := range quantiles {
			e := relErr(md.Agg.Quantile(q), exactQuantile(durs, q))
			worst = max(worst, e)
			if e > 0.01 {
				t.Errorf("seed %d q=%g: rel err %.3f%% above 1%%", seed, q, 100*e)
			}
		}
		if md.Stats.AboveAvgPercent+md.Stats.BelowAvgPercent > 100.0001 || md.Stats.AboveAvgPercent <= 0 {
			t.Errorf("seed %d: above/below avg %g/%g", seed, md.Stats.AboveAvgPercent, md.Stats.BelowAvgPercent)
		}

		// Thresholds on merged data agree with the same thresholds on the
		// whole stream, unless the exact value is within the histogram's
		// accuracy of the bound (then either answer is within precision).
		results := merged.EvaluateThresholds(propertyThresholds)
		compared := 0
		for _, res := range results {
			if res.Error != "" {
				t.Errorf("seed %d %s %s: %s", seed, res.Metric, res.Expression, res.Error)
				continue
			}
			lhs, ok := exactThreshold(t, stream, res.Metric, res.Expression, span.Seconds())
			th, _ := ParseThreshold(res.Expression)
			if !ok {
				// k6 judges an empty trend sub-metric on zeros.
				if res.Skipped || res.Value != 0 || res.Passed != th.Passes(0) {
					t.Errorf("seed %d %s: no samples, got %+v; k6 judges it on 0", seed, res.Metric, res)
				}
				continue
			}
			if relErr(res.Value, lhs) > 0.01 {
				t.Errorf("seed %d %s %s: merged lhs %g exact %g", seed, res.Metric, res.Expression, res.Value, lhs)
			}
			if math.Abs(lhs-th.Value) <= 0.01*math.Abs(lhs) {
				continue
			}
			compared++
			if res.Passed != th.Passes(lhs) {
				t.Errorf("seed %d %s %s: merged says %v, whole stream %v (lhs %g vs %g)",
					seed, res.Metric, res.Expression, res.Passed, th.Passes(lhs), res.Value, lhs)
			}
		}

		if compared < len(results)-2 {
			t.Errorf("seed %d: only %d of %d thresholds compared", seed, compared, len(results))
		}

		// Checks are exact.
		var pass, fail uint64
		for _, s := range stream {
			if s.metric == "checks" {
				if s.v != 0 {
					pass++
				} else {
					fail++
				}
			}
		}
		var gp, gf uint64
		for _, c := range merged.Checks {
			gp += c.Passes
			gf += c.Fails
		}
		if gp != pass || gf != fail {
			t.Errorf("seed %d: checks %d/%d want %d/%d", seed, gp, gf, pass, fail)
		}
	}
	t.Logf("worst relative quantile error after split+merge: %.4f%%", 100*worst)
}

// A run ten times longer keeps the same number of windows and series, so
// results memory does not grow with duration.
func TestCollectorMemoryIsBoundedByConfigNotDuration(t *testing.T) {
	cfg := CollectorConfig{Window: 10 * time.Second, MaxWindows: 30, MaxSeriesPerMetric: 5}
	start := time.Unix(1_700_000_000, 0)
	size := func(d time.Duration) (windows, series int, n uint64) {
		r := rand.New(rand.NewSource(3))
		c := NewCollector(cfg, start)
		step := d / 20000
		for i := 0; i < 20000; i++ {
			ts := start.Add(time.Duration(i) * step).UnixNano()
			tags := map[string]string{"scenario": fmt.Sprint("s", r.Intn(20))} // 20 > cap of 5
			c.Series("http_req_duration", Trend, "time", tags).Add(ts, r.Float64()*100)
			c.AddCPU(ts, 0.001)
		}
		e := c.Envelope(start.Add(d))
		for _, s := range e.Metrics[0].Series {
			windows = max(windows, len(s.Windows))
			n += s.Total.Count
		}
		return windows, len(e.Metrics[0].Series), n
	}
	w1, s1, n1 := size(10 * time.Minute)
	w10, s10, n10 := size(100 * time.Minute)
	if w1 > cfg.MaxWindows || w10 > cfg.MaxWindows || s1 != s10 || s10 > cfg.MaxSeriesPerMetric+1 {
		t.Fatalf("1x: %d windows %d series; 10x: %d windows %d series", w1, s1, w10, s10)
	}
	if n1 != 20000 || n10 != 20000 {
		t.Fatalf("samples lost: %d, %d", n1, n10)
	}
}
