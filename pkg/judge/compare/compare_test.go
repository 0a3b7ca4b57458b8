package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"fleetbench.dev/fleetbench/api/v1alpha1"
)

// series is a whole value and n windows of 2 % noise around it (seeded by name and value).
func series(name, stat, unit string, whole float64, n int) Series {
	rng := rand.New(rand.NewPCG(uint64(len(name))*7919+uint64(whole*1000), uint64(n)))
	return Series{Name: name, Stat: stat, Unit: unit, Whole: whole, Windows: ar1(rng, n, whole, 0.02, 0.3)}
}

// run has the five built-ins at the given factors of a reference run (throughput 1000 req/s,
// p95 120 ms, p99 250 ms, 300 MiB, 1.5 cores), 30 windows each.
func run(name string, tput, p95, p99, mem, cpu float64) Record {
	return Record{Run: RunRef{Name: name, UID: "uid-" + name, CompletionTime: time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)},
		WindowSeconds: 10, Series: []Series{
			series("throughput", "", "req/s", 1000*tput, 30),
			series("latencyP95", "", "ms", 120*p95, 30),
			series("latencyP99", "", "ms", 250*p99, 30),
			series("targetMemory", "", "MiB", 300*mem, 30),
			series("targetCPU", "", "cores", 1.5*cpu, 30),
		}}
}

func rowOf(t *testing.T, c v1alpha1.Comparison, name string) v1alpha1.MetricComparison {
	t.Helper()
	for _, r := range c.Metrics {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, c.Metrics)
	return v1alpha1.MetricComparison{}
}

func i32(v int32) *int32 { return &v }

func TestCompareDecisions(t *testing.T) {
	S, O, R := v1alpha1.ComparisonSuccess, v1alpha1.ComparisonOK, v1alpha1.ComparisonRegressed
	cases := []struct {
		name    string
		spec    v1alpha1.BaselineSpec
		current Record
		want    map[string]v1alpha1.ComparisonDecision
		overall v1alpha1.ComparisonDecision
		worst   string // prefix
	}{
		{"same version", v1alpha1.BaselineSpec{}, run("b", 1, 1, 1, 1, 1),
			map[string]v1alpha1.ComparisonDecision{"throughput": S, "latencyP95": S, "latencyP99": S, "targetMemory": S, "targetCPU": S}, S, ""},
		{"better everywhere", v1alpha1.BaselineSpec{}, run("c", 1.2, 0.8, 0.8, 0.9, 0.7),
			map[string]v1alpha1.ComparisonDecision{"throughput": S, "latencyP95": S, "latencyP99": S, "targetMemory": S, "targetCPU": S}, S, ""},
		{"throughput down 30 %", v1alpha1.BaselineSpec{}, run("c", 0.7, 1, 1, 1, 1),
			map[string]v1alpha1.ComparisonDecision{"throughput": R, "latencyP95": S}, R, "throughput 70.00 % of baseline (ok ≥ 80 %), p <0.0001"},
		{"latency up 10 % is ok", v1alpha1.BaselineSpec{}, run("c", 1, 1.1, 1, 1, 1),
			map[string]v1alpha1.ComparisonDecision{"throughput": S, "latencyP95": O, "latencyP99": S}, O, "latencyP95 110.00 % of baseline (ok ≤ 120 %)"},
		{"worst of two regressions", v1alpha1.BaselineSpec{}, run("c", 1, 1.3, 1.6, 1, 1),
			map[string]v1alpha1.ComparisonDecision{"latencyP95": R, "latencyP99": R}, R, "latencyP99 160.00 %"},
		{"memory band override makes 110 % a regression",
			v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{{Name: "targetMemory", OKPercent: i32(105)}}},
			run("c", 1, 1, 1, 1.1, 1), map[string]v1alpha1.ComparisonDecision{"targetMemory": R}, R, "targetMemory 110.00 % of baseline (ok ≤ 105 %)"},
		{"throughput override without direction keeps HigherIsBetter",
			v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{{Name: "throughput", SuccessPercent: i32(100), OKPercent: i32(95)}}},
			run("c", 0.9, 1, 1, 1, 1), map[string]v1alpha1.ComparisonDecision{"throughput": R}, R, "throughput 90.00 % of baseline (ok ≥ 95 %)"},
	}
	base := run("base", 1, 1, 1, 1, 1)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Compare(c.spec, base, c.current)
			for name, want := range c.want {
				if r := rowOf(t, got, name); r.Decision != want {
					t.Errorf("%s: %s (%s %%, p %s, note %q), want %s", name, r.Decision, r.RatioPercent, r.PValue, r.Note, want)
				}
			}
			if got.Decision != c.overall || !strings.HasPrefix(got.Worst, c.worst) || (c.worst == "") != (got.Worst == "") {
				t.Errorf("overall %s worst %q, want %s %q", got.Decision, got.Worst, c.overall, c.worst)
			}
		})
	}
}

func TestCompareRowContents(t *testing.T) {
	c := Compare(v1alpha1.BaselineSpec{}, run("base", 1, 1, 1, 1, 1), run("cur", 0.7, 1, 1, 1, 1))
	if c.Baseline == nil || c.Baseline.Name != "base" || c.Baseline.UID != "uid-base" || c.Baseline.Source != "TestRun" || c.Baseline.CompletionTime == nil {
		t.Fatalf("baseline %+v", c.Baseline)
	}
	if len(c.Metrics) != 5 || c.Metrics[0].Name != "throughput" || c.Metrics[4].Name != "targetCPU" {
		t.Fatalf("rows %+v", c.Metrics)
	}
	r := c.Metrics[0]
	if r.Baseline != "1000.00" || r.Current != "700.00" || r.RatioPercent != "70.00" || r.Unit != "req/s" ||
		r.Band != "success ≥ 100 %, ok ≥ 80 %" || r.Direction != v1alpha1.HigherIsBetter ||
		r.BaselineSamples != 30 || r.CurrentSamples != 30 || r.PValue != "<0.0001" {
		t.Fatalf("throughput row %+v", r)
	}
	lo, hi := parse(t, r.CILowPercent), parse(t, r.CIHighPercent)
	if !(lo < 70 && 70 < hi && hi-lo < 5) {
		t.Fatalf("CI [%v, %v] does not bound 70 %% tightly", lo, hi)
	}
	if c.Metrics[1].Band != "success ≤ 100 %, ok ≤ 120 %" || c.Metrics[4].Unit != "cores" || c.Metrics[4].Baseline != "1.50" {
		t.Fatalf("rows %+v", c.Metrics[1:])
	}
	if !strings.Contains(c.Message, "5 metrics compared with base: 1 regressed") || c.Method == "" || len(c.Method) > 512 {
		t.Fatalf("message %q method %q", c.Message, c.Method)
	}
}

func parse(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscanf(s, "%g", &v); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

func TestCompareCustomMetrics(t *testing.T) {
	base, cur := run("base", 1, 1, 1, 1, 1), run("cur", 1, 1, 1, 1, 1)
	base.Series = append(base.Series,
		series("http_req_duration{name:push}", "p95", "ms", 40, 30), series("http_req_duration{name:push}", "p99", "ms", 80, 30),
		series("pushes", "rate", "1/s", 500, 30), series("queue_depth", "value", "", 10, 30))
	cur.Series = append(cur.Series,
		series("http_req_duration{name:push}", "p95", "ms", 40, 30), series("http_req_duration{name:push}", "p99", "ms", 120, 30),
		series("pushes", "rate", "1/s", 300, 30), series("queue_depth", "value", "", 10, 30))
	spec := v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{
		{Name: "http_req_duration{name:push}", Stat: "p99"},
		{Name: "pushes", Direction: v1alpha1.HigherIsBetter},
		{Name: "queue_depth", Stat: "p95"},
		{Name: "not_there"},
	}}
	c := Compare(spec, base, cur)
	if len(c.Metrics) != 9 {
		t.Fatalf("%d rows, want 5 built-ins and 4 custom: %+v", len(c.Metrics), c.Metrics)
	}
	if r := c.Metrics[5]; r.Name != "http_req_duration{name:push}" || r.Stat != "p99" || r.Decision != v1alpha1.ComparisonRegressed || r.RatioPercent != "150.00" {
		t.Errorf("push p99: %+v", r)
	}
	// no stat given, no p95 in the records: the one stat both have (a Counter's rate)
	if r := c.Metrics[6]; r.Stat != "rate" || r.Direction != v1alpha1.HigherIsBetter || r.Decision != v1alpha1.ComparisonRegressed {
		t.Errorf("pushes: %+v", r)
	}
	if r := c.Metrics[7]; r.Decision != v1alpha1.ComparisonNoData || r.Note != "in neither run" {
		t.Errorf("a stat the records lack is NoData: %+v", r)
	}
	if r := c.Metrics[8]; r.Decision != v1alpha1.ComparisonNoData || r.Stat != "p95" {
		t.Errorf("unknown metric: %+v", r)
	}
	if c.Decision != v1alpha1.ComparisonRegressed || !strings.HasPrefix(c.Worst, "pushes rate 60.00 %") {
		t.Errorf("overall %s %q", c.Decision, c.Worst)
	}
}

func TestCompareNoDataAndTooFewSamples(t *testing.T) {
	full := run("base", 1, 1, 1, 1, 1)
	noTarget := run("cur", 1, 1, 1, 1, 1)
	noTarget.Series = noTarget.Series[:3]
	c := Compare(v1alpha1.BaselineSpec{}, full, noTarget)
	if r := rowOf(t, c, "targetMemory"); r.Decision != v1alpha1.ComparisonNoData || r.Note != "missing from this run" {
		t.Errorf("targetMemory %+v", r)
	}
	if c.Decision != v1alpha1.ComparisonSuccess {
		t.Errorf("NoData rows decide nothing: overall %s", c.Decision)
	}

	// nothing at all
	c = Compare(v1alpha1.BaselineSpec{}, Record{Run: RunRef{Name: "base"}}, Record{})
	if c.Decision != v1alpha1.ComparisonNoData || len(c.Metrics) != 0 || !strings.Contains(c.Message, "nothing to compare") {
		t.Errorf("empty records: %+v", c)
	}

	// 3 windows a side: a 50 % drop is reported but not decided
	short := func(name string, v float64) Record {
		return Record{Run: RunRef{Name: name}, Series: []Series{{Name: "throughput", Whole: v, Windows: []float64{v, v * 1.01, v * 0.99}}}}
	}
	c = Compare(v1alpha1.BaselineSpec{}, short("base", 1000), short("cur", 500))
	r := rowOf(t, c, "throughput")
	if r.Decision != v1alpha1.ComparisonTooFewSamples || r.RatioPercent != "50.00" || !strings.Contains(r.Note, "needs at least 4") {
		t.Errorf("3 windows: %+v", r)
	}
	if c.Decision != v1alpha1.ComparisonTooFewSamples {
		t.Errorf("every row too few: overall %s, want TooFewSamples", c.Decision)
	}
}

func TestCompareZeroBaseline(t *testing.T) {
	base := Record{Series: []Series{{Name: "http_req_failed", Stat: "rate", Whole: 0, Windows: make([]float64, 30)}}}
	cur := Record{Series: []Series{series("http_req_failed", "rate", "", 0.05, 30)}}
	c := Compare(v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{{Name: "http_req_failed", Stat: "rate"}}}, base, cur)
	r := rowOf(t, c, "http_req_failed")
	if r.Decision != v1alpha1.ComparisonNoData || r.RatioPercent != "" || !strings.Contains(r.Note, "baseline is 0") || r.Baseline != "0.00" || r.Current != "0.0500" {
		t.Fatalf("zero baseline: %+v", r)
	}
}

func TestCompareHostileValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	t.Run("non-finite whole values", func(t *testing.T) {
		for _, v := range []float64{nan, inf, -5} {
			c := Compare(v1alpha1.BaselineSpec{}, run("base", 1, 1, 1, 1, 1),
				Record{Series: []Series{{Name: "throughput", Whole: v, Windows: []float64{1, 2}}}})
			if r := rowOf(t, c, "throughput"); r.Decision != v1alpha1.ComparisonNoData || r.Current != "" {
				t.Errorf("whole %v: %+v", v, r)
			}
		}
	})
	t.Run("bad windows are dropped and counted", func(t *testing.T) {
		cur := run("cur", 0.7, 1, 1, 1, 1)
		cur.Series[0].Windows = append(cur.Series[0].Windows, nan, inf, -1, math.Inf(-1))
		r := rowOf(t, Compare(v1alpha1.BaselineSpec{}, run("base", 1, 1, 1, 1, 1), cur), "throughput")
		if r.Decision != v1alpha1.ComparisonRegressed || r.CurrentSamples != 30 || !strings.Contains(r.Note, "4 samples dropped") {
			t.Errorf("%+v", r)
		}
	})
	t.Run("a million windows cost bounded work", func(t *testing.T) {
		huge := make([]float64, 1_000_000)
		for i := range huge {
			huge[i] = 1000 + float64(i%7)
		}
		b := Record{Series: []Series{{Name: "throughput", Whole: 1003, Windows: huge}}}
		r := rowOf(t, Compare(v1alpha1.BaselineSpec{}, b, b), "throughput")
		if r.BaselineSamples != maxSamples || r.Decision != v1alpha1.ComparisonSuccess {
			t.Errorf("%+v", r)
		}
	})
	t.Run("extreme magnitudes stay within the status lengths", func(t *testing.T) {
		b := Record{Series: []Series{{Name: "throughput", Whole: 1e-300, Windows: []float64{1e-300, 1e-300, 1e-300, 1e-300}}}}
		cu := Record{Series: []Series{{Name: "throughput", Whole: math.MaxFloat64, Windows: []float64{1e308, 1e308, 1e308, 1e308}}}}
		r := rowOf(t, Compare(v1alpha1.BaselineSpec{}, b, cu), "throughput")
		for _, s := range []string{r.Baseline, r.Current, r.RatioPercent, r.CILowPercent, r.CIHighPercent, r.PValue} {
			if len(s) > 64 {
				t.Errorf("%q longer than 64", s)
			}
		}
	})
	t.Run("long names and units are cut to the API's limits", func(t *testing.T) {
		long := strings.Repeat("é", 300)
		b := Record{Run: RunRef{Name: long, UID: long}, Series: []Series{{Name: long, Stat: long, Unit: long, Whole: 1}}}
		c := Compare(v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{{Name: long, Stat: long}}}, b, b)
		r := c.Metrics[0]
		if len(r.Name) > 256 || len(r.Stat) > 16 || len(r.Unit) > 16 || len(c.Baseline.Name) > 253 || len(c.Baseline.UID) > 64 || !strings.HasPrefix(long, r.Name) {
			t.Errorf("lengths %d %d %d %d %d", len(r.Name), len(r.Stat), len(r.Unit), len(c.Baseline.Name), len(c.Baseline.UID))
		}
	})
	t.Run("bands out of range or inverted", func(t *testing.T) {
		spec := v1alpha1.BaselineSpec{Metrics: []v1alpha1.ComparedMetric{
			{Name: "latencyP95", SuccessPercent: i32(110), OKPercent: i32(90)}, // ok inside success
			{Name: "latencyP99", SuccessPercent: i32(-5), OKPercent: i32(1 << 30)},
			{Name: "targetCPU", Direction: "Sideways"},
		}}
		c := Compare(spec, run("base", 1, 1, 1, 1, 1), run("cur", 1, 1, 1, 1, 1))
		if r := rowOf(t, c, "latencyP95"); r.Band != "success ≤ 110 %, ok ≤ 110 %" || !strings.Contains(r.Note, "inside the success band") {
			t.Errorf("%+v", r)
		}
		if r := rowOf(t, c, "latencyP99"); r.Band != "success ≤ 1 %, ok ≤ 1000 %" {
			t.Errorf("%+v", r)
		}
		if r := rowOf(t, c, "targetCPU"); r.Direction != v1alpha1.LowerIsBetter || !strings.Contains(r.Note, "Sideways") {
			t.Errorf("%+v", r)
		}
	})
}

func TestCompareCapsRowsDeterministically(t *testing.T) {
	var spec v1alpha1.BaselineSpec
	base, cur := run("base", 1, 1, 1, 1, 1), run("cur", 1, 1, 1, 1, 1)
	for i := range 40 {
		name := fmt.Sprintf("m%02d", i)
		spec.Metrics = append(spec.Metrics, v1alpha1.ComparedMetric{Name: name, Stat: "avg"})
		base.Series = append(base.Series, series(name, "avg", "ms", 10, 20))
		cur.Series = append(cur.Series, series(name, "avg", "ms", 10, 20))
	}
	spec.Metrics = append(spec.Metrics, spec.Metrics[0]) // a duplicate counts once
	c := Compare(spec, base, cur)
	if len(c.Metrics) != MaxRows || c.Metrics[5].Name != "m00" || c.Metrics[31].Name != "m26" {
		t.Fatalf("%d rows, 6th %s, last %s", len(c.Metrics), c.Metrics[5].Name, c.Metrics[len(c.Metrics)-1].Name)
	}
	if !strings.Contains(c.Message, "13 more metrics not compared (at most 32 rows)") {
		t.Fatalf("message %q", c.Message)
	}
	if again := Compare(spec, base, cur); !reflect.DeepEqual(c, again) {
		t.Fatal("the same records gave a different comparison")
	}
}
