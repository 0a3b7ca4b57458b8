package htmlreport

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport/browsertest"
)

const (
	baselineName    = "stab-2-1-c1"
	baselineWindows = 20 // of 15 s: the same 300 s load as the run's 30 windows of 10 s
	baselineWS      = 15.0
	baselineTarget  = 25
)

// fixtureComparison is a run compared with baselineName: throughput regressed, p95 within the
// ok band, target memory with too few samples, p99 without data.
func fixtureComparison() *v1alpha1.Comparison {
	done := metav1.NewTime(loadStart.Add(-24 * time.Hour))
	return &v1alpha1.Comparison{
		Baseline: &v1alpha1.ComparedRun{Name: baselineName, UID: "0a1b2c3d-4e5f", Source: "Kept", CompletionTime: &done},
		Decision: v1alpha1.ComparisonRegressed, Worst: "throughput 71.20 % of baseline",
		Method: "Mann-Whitney U over 10 s window blocks, one-sided, alpha 0.05; bootstrap 95 % CI of the ratio",
		Metrics: []v1alpha1.MetricComparison{
			{Name: "throughput", Unit: "req/s", Direction: v1alpha1.HigherIsBetter, Baseline: "200.00", Current: "142.40",
				RatioPercent: "71.20", Band: "success ≥ 100 %, ok ≥ 80 %", CILowPercent: "65.10", CIHighPercent: "77.30",
				PValue: "0.0004", BaselineSamples: 20, CurrentSamples: 30, Decision: v1alpha1.ComparisonRegressed},
			{Name: "latencyP95", Stat: "p95", Unit: "ms", Direction: v1alpha1.LowerIsBetter, Baseline: "25.00", Current: "26.00",
				RatioPercent: "104.00", Band: "success ≤ 100 %, ok ≤ 120 %", PValue: "0.21", BaselineSamples: 20, CurrentSamples: 30,
				Decision: v1alpha1.ComparisonOK},
			{Name: "targetMemory", Stat: "max", Unit: "MiB", Direction: v1alpha1.LowerIsBetter, Baseline: "61.00", Current: "64.00",
				RatioPercent: "104.92", Band: "success ≤ 100 %, ok ≤ 120 %", BaselineSamples: 3, CurrentSamples: 3,
				Decision: v1alpha1.ComparisonTooFewSamples, Note: "3 samples a side: a rank test needs 4 to reach p < 0.05"},
			{Name: "latencyP99", Stat: "p99", Unit: "ms", Direction: v1alpha1.LowerIsBetter, Decision: v1alpha1.ComparisonNoData},
		},
	}
}

// fixtureBaseline is the baseline's kept record: 20 windows of 15 s at a steady 200 req/s,
// 25 target samples.
func fixtureBaseline() *compare.Record {
	rec := &compare.Record{Run: compare.RunRef{Name: baselineName, UID: "0a1b2c3d-4e5f"}, WindowSeconds: baselineWS}
	var rps, p95, p99, mem, cpu []float64
	for i := range baselineWindows {
		rps = append(rps, 200+float64(i%3))
		p95, p99 = append(p95, 25+float64(i%4)), append(p99, 48+float64(i%5))
	}
	for i := range baselineTarget {
		mem, cpu = append(mem, 40+float64(i)/2), append(cpu, 0.5+float64(i%3)/10)
	}
	rec.Series = []compare.Series{
		{Name: compare.SeriesThroughput, Unit: "req/s", Whole: 200, Windows: rps},
		{Name: compare.SeriesLatencyP95, Stat: "p95", Unit: "ms", Whole: 25, Windows: p95},
		{Name: compare.SeriesLatencyP99, Stat: "p99", Unit: "ms", Whole: 50, Windows: p99},
		{Name: compare.SeriesTargetMemory, Stat: "max", Unit: "MiB", Whole: 52, Windows: mem},
		{Name: compare.SeriesTargetCPU, Stat: "avg", Unit: "cores", Whole: 0.6, Windows: cpu},
	}
	return rec
}

func comparedRun() *v1alpha1.TestRun {
	run := fixtureTestRun()
	run.Status.Verdict = v1alpha1.VerdictRegressed
	run.Status.Comparison = fixtureComparison()
	return run
}

func chartNamed(t *testing.T, charts []Chart, name string) Chart {
	t.Helper()
	i := slices.IndexFunc(charts, func(c Chart) bool { return c.Name == name })
	if i < 0 {
		t.Fatalf("no chart %q", name)
	}
	return charts[i]
}

// valueAt is the series' value at x (a gap when x is not on the chart).
func valueAt(c Chart, s Series, x float64) Value {
	i := slices.Index(c.X, x)
	if i < 0 {
		return Gap
	}
	return s.Values[i]
}

// TestOverlayAlignsAtLoadStart: the baseline's window i is drawn at i × its own window length
// from this run's first window, this run's values stay at their own times, and each series has
// a gap wherever the other run has a point.
func TestOverlayAlignsAtLoadStart(t *testing.T) {
	tl, rec := fixtureTimeline(), fixtureBaseline()
	charts, why := overlayBaseline(TestRunCharts(tl), tl, rec, baselineName)
	if why != "" {
		t.Fatalf("not drawn: %s", why)
	}
	c := chartNamed(t, charts, "throughput")
	if len(c.Series) != 4 {
		t.Fatalf("throughput has %d series, want req/s, the VUs in use and allocated, and the baseline", len(c.Series))
	}
	cur, base := c.Series[0], c.Series[3]
	if base.Label != "baseline "+baselineName || !base.Dash || !base.Faint || base.Color != cur.Color || base.Right {
		t.Errorf("baseline series %+v: want dashed, faint, req/s's colour and axis, labelled baseline %s", base, baselineName)
	}
	t0 := unixSeconds(tl.Windows[0].Start)
	for i, v := range rec.Series[0].Windows {
		if got := valueAt(c, base, t0+float64(i)*baselineWS); got != Value(v) {
			t.Errorf("baseline window %d at +%gs: %v, want %v", i, float64(i)*baselineWS, got, v)
		}
	}
	for i, w := range tl.Windows {
		if got := valueAt(c, cur, unixSeconds(w.Start)); got != Value(w.RequestsPerSecond) {
			t.Errorf("this run's window %d: %v, want %v", i, got, w.RequestsPerSecond)
		}
	}
	// +10 s is this run's second window and no window of the baseline's (15 s).
	if v := valueAt(c, base, t0+10); !math.IsNaN(float64(v)) {
		t.Errorf("the baseline has a value %v at +10 s, where it has no window", v)
	}
	if v := valueAt(c, cur, t0+15); !math.IsNaN(float64(v)) {
		t.Errorf("this run has a value %v at +15 s, where it has no window", v)
	}
	if !slices.IsSorted(c.X) || len(c.X) != len(cur.Values) || len(c.X) != len(base.Values) {
		t.Errorf("x %d (sorted %v), values %d and %d", len(c.X), slices.IsSorted(c.X), len(cur.Values), len(base.Values))
	}
	if !strings.Contains(c.Note, "start of each run's load") || !strings.Contains(c.Note, "15s") {
		t.Errorf("throughput note %q does not say how the runs are aligned", c.Note)
	}

	lat := chartNamed(t, charts, "latency")
	var labels []string
	for _, s := range lat.Series {
		labels = append(labels, s.Label)
	}
	if !slices.Equal(labels, []string{"p50", "p95", "p99", "baseline " + baselineName + " p95", "baseline " + baselineName + " p99"}) {
		t.Errorf("latency series %q", labels)
	}
	if strings.Count(lat.Note, "Dashed") != 1 {
		t.Errorf("latency note repeats itself: %q", lat.Note)
	}
}

// TestOverlayTargetSpreadOverLoad: the kept record has the baseline's target samples without
// times: they are spread evenly over its load (20 windows of 15 s) from this run's load start,
// and its first CPU value (a rate with no previous sample) is a gap.
func TestOverlayTargetSpreadOverLoad(t *testing.T) {
	tl, rec := fixtureTimeline(), fixtureBaseline()
	charts, _ := overlayBaseline(TestRunCharts(tl), tl, rec, baselineName)
	c := chartNamed(t, charts, "target")
	if len(c.Series) != 4 {
		t.Fatalf("target has %d series", len(c.Series))
	}
	mem, cpu := c.Series[2], c.Series[3]
	if mem.Right || !cpu.Right || mem.Color != c.Series[0].Color || cpu.Color != c.Series[1].Color {
		t.Errorf("baseline memory/CPU not on their run's axes and colours: %+v %+v", mem, cpu)
	}
	start, step := unixSeconds(tl.LoadStart), float64(baselineWindows)*baselineWS/float64(baselineTarget-1)
	for j, v := range rec.Series[3].Windows {
		if got := valueAt(c, mem, start+float64(j)*step); got != Value(v) {
			t.Errorf("baseline memory sample %d at +%gs: %v, want %v", j, float64(j)*step, got, v)
		}
	}
	if v := valueAt(c, cpu, start); !math.IsNaN(float64(v)) {
		t.Errorf("the baseline's first CPU value is %v, want a gap", v)
	}
	if v := valueAt(c, cpu, start+step); v != Value(rec.Series[4].Windows[1]) {
		t.Errorf("the baseline's second CPU value is %v", v)
	}
	if !strings.Contains(c.Note, "spread evenly") {
		t.Errorf("target note %q does not say the samples are spread", c.Note)
	}
}

// TestOverlayBoundsHostileRecords: a record written by hand into the ConfigMap is drawn within
// bounds or not at all, with the reason.
func TestOverlayBoundsHostileRecords(t *testing.T) {
	tl := fixtureTimeline()
	long := fixtureBaseline()
	long.Series[0].Windows = make([]float64, 10*maxOverlayPoints+7)
	for i := range long.Series[0].Windows {
		long.Series[0].Windows[i] = 200
	}
	charts, _ := overlayBaseline(TestRunCharts(tl), tl, long, baselineName)
	if base := chartNamed(t, charts, "throughput").Series[3]; base.Points() > maxOverlayPoints {
		t.Errorf("%d baseline points drawn, want at most %d", base.Points(), maxOverlayPoints)
	}
	for _, ws := range []float64{0, -1, math.NaN(), 1e300} {
		rec := fixtureBaseline()
		rec.WindowSeconds = ws
		charts, why := overlayBaseline(TestRunCharts(tl), tl, rec, baselineName)
		if why == "" || len(chartNamed(t, charts, "throughput").Series) != 3 {
			t.Errorf("window of %g s: drawn (why %q)", ws, why)
		}
	}
	none := &compare.Record{WindowSeconds: 10, Series: []compare.Series{{Name: "http_reqs", Stat: "rate", Windows: []float64{1, 2}}}}
	if _, why := overlayBaseline(TestRunCharts(tl), tl, none, baselineName); why == "" {
		t.Error("a record without the charted series says nothing")
	}
	if _, why := overlayBaseline(nil, nil, fixtureBaseline(), baselineName); why == "" {
		t.Error("a run without timeline says nothing")
	}
}

// TestComparedReportInBrowser: the report of a compared run shows the comparison table from
// status, its Regressed row styled as a failure, and the baseline's series over the charts.
func TestComparedReportInBrowser(t *testing.T) {
	run, tl, rec := comparedRun(), fixtureTimeline(), fixtureBaseline()
	path := render(t, "compared-report.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: run, Timeline: tl, Baseline: rec})
	})
	res := inBrowser(t, path)
	drawn, _ := overlayBaseline(TestRunCharts(tl), tl, rec, baselineName)
	want := map[string]int{"errors": fixtureWindows, "latency-histogram": fixtureBuckets}
	for _, name := range []string{"throughput", "latency", "target"} {
		want[name] = len(chartNamed(t, drawn, name).X)
	}
	if err := browsertest.Verify(res, want); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"Compared with " + baselineName, "kept results", "throughput 71.20 % of baseline", "Mann-Whitney U",
		"% of previous", "95 % CI of the ratio"} {
		if !strings.Contains(res.Text, s) {
			t.Errorf("the page does not show %q", s)
		}
	}
	rows := map[string]map[string]string{
		"throughput":       {"metric": "throughput (req/s)", "baseline": "200.00", "current": "142.40", "ratioPercent": "71.20", "ci": "[65.10, 77.30] %", "pValue": "0.0004", "decision": "Regressed", "samples": "20 / 30"},
		"latencyP95 p95":   {"ratioPercent": "104.00", "decision": "OK"},
		"targetMemory max": {"decision": "TooFewSamples", "note": "3 samples a side: a rank test needs 4 to reach p < 0.05"},
		"latencyP99 p99":   {"decision": "NoData"},
	}
	for row, cols := range rows {
		for col, v := range cols {
			if c, ok := res.Cell(row, col); !ok || strings.TrimSpace(c.Text) != v {
				t.Errorf("row %q column %q: %q (found %v), want %q", row, col, c.Text, ok, v)
			}
		}
	}
	const failColor, warnColor, mutedColor = "rgb(198, 40, 40)", "rgb(178, 106, 0)", "rgb(91, 100, 117)"
	for row, color := range map[string]string{"throughput": failColor, "latencyP95 p95": warnColor,
		"targetMemory max": mutedColor, "latencyP99 p99": mutedColor} {
		if c, _ := res.Cell(row, "decision"); c.Color != color {
			t.Errorf("row %q decision %q is drawn %s, want %s", row, c.Text, c.Color, color)
		}
	}
	if c, _ := res.Cell("", "comparison-decision"); c.Color != failColor {
		t.Errorf("the overall decision %q is drawn %s, want %s", c.Text, c.Color, failColor)
	}
	c, _ := res.Chart("throughput")
	if !slices.Contains(c.Legend, "req/s") || !slices.Contains(c.Legend, "baseline "+baselineName) {
		t.Errorf("throughput legend %q: want req/s and baseline %s", c.Legend, baselineName)
	}
	if strings.Contains(res.Text, "baseline series not available") {
		t.Error("the page says the baseline series are not available")
	}
}

// TestComparedReportWithoutBaselineRecord: the kept record could not be read: the page still
// draws this run's charts and the table, and says why the baseline's series are missing.
func TestComparedReportWithoutBaselineRecord(t *testing.T) {
	run := comparedRun()
	why := "its kept record (ConfigMap stab-2-1-c1-kept-0a1b2c3d) is gone: deleted, or beyond the retention count"
	path := render(t, "compared-no-record.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: run, Timeline: fixtureTimeline(), BaselineMissing: why})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"throughput": fixtureWindows, "latency": fixtureWindows, "errors": fixtureWindows,
		"target": fixtureTargetPoints, "latency-histogram": fixtureBuckets,
	}); err != nil {
		t.Error(err)
	}
	if c, ok := res.Cell("", "baseline-series"); !ok || c.Text != "baseline series not available: "+why {
		t.Errorf("note %q (found %v)", c.Text, ok)
	}
	if c, _ := res.Cell("throughput", "decision"); c.Text != "Regressed" {
		t.Errorf("the table is missing: throughput decision %q", c.Text)
	}
	if c, _ := res.Chart("throughput"); c.Series != 3 {
		t.Errorf("throughput has %d series without a baseline record, want 3 (req/s, VUs in use and allocated)", c.Series)
	}
}

// TestComparisonEscapes: the comparison's words, the baseline's name in the charts' legends and
// the reason its series are missing reach the page as text.
func TestComparisonEscapes(t *testing.T) {
	run := comparedRun()
	c := run.Status.Comparison
	c.Worst, c.Method, c.Message, c.Baseline.Name = hostile, hostile, hostile, hostile
	c.Metrics[0].Note, c.Metrics[0].Band, c.Metrics[0].Name = hostile, hostile, hostile
	rec := fixtureBaseline()
	rec.Run.Name = hostile
	rec.Series[0].Unit = hostile
	for _, in := range []TestRunInput{{Baseline: rec}, {BaselineMissing: hostile}} {
		in.Run, in.Timeline = run, fixtureTimeline()
		var buf bytes.Buffer
		if err := WriteTestRun(&buf, in); err != nil {
			t.Fatal(err)
		}
		checkEscaped(t, buf.Bytes(), in.Baseline != nil)
	}
}
