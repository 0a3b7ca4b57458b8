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
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport/browsertest"
)

const (
	quickWindows = 30 // 30 s in the 1 s windows a 30 s run now gets (runners.WindowFor)
	quickSamples = 17 // sampled every 2 s (runners.SampleIntervalFor), one before and one after
)

// quickstartTimeline is examples/quickstart as a reader saw it: 200 req/s for 30 s, steady
// within half a request per second, the target's RSS between 14.80 and 14.86 MiB.
func quickstartTimeline() *judge.Timeline {
	tl := &judge.Timeline{Protocol: "http", WindowSeconds: 1, LoadStart: loadStart,
		LoadEnd: loadStart.Add(quickWindows * time.Second), TargetMemory: "rss"}
	for i := range quickWindows {
		w := judge.TimelineWindow{Start: loadStart.Add(time.Duration(i) * time.Second),
			RequestsPerSecond: 200 + 0.4*math.Sin(float64(i)), VUs: float64(i % 2), VUsMax: 100,
			P50: 1.1 + 0.05*math.Sin(float64(i)/3), P95: 2.4, P99: 3.9}
		w.Requests = uint64(math.Round(w.RequestsPerSecond))
		w.Iterations = w.Requests
		tl.Windows = append(tl.Windows, w)
	}
	for i := range quickSamples {
		at := loadStart.Add(time.Duration(2*i-1) * time.Second)
		tl.Target = append(tl.Target, judge.TargetPoint{At: at, MemoryMiB: 14.80 + 0.06*float64(i)/quickSamples,
			Cores: 0.21 + 0.01*math.Sin(float64(i))})
	}
	return tl
}

func quickstartRun() *v1alpha1.TestRun {
	start, end := metav1.NewTime(loadStart), metav1.NewTime(loadStart.Add(35*time.Second))
	devices := int32(200)
	return &v1alpha1.TestRun{
		ObjectMeta: metav1.ObjectMeta{Name: "quickstart", Namespace: "demo"},
		Spec: v1alpha1.TestRunSpec{Profile: "C1", Parallelism: v1alpha1.FixedParallelism(2),
			Load: &v1alpha1.LoadSpec{Devices: &devices, Period: "1s", Duration: "30s"}},
		Status: v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseSucceeded, Verdict: v1alpha1.VerdictPassed,
			StartTime: &start, CompletionTime: &end,
			Results: &v1alpha1.Results{Protocol: "http",
				Requests:   &v1alpha1.RequestCounts{Total: 6000, Accepted: 6000},
				Throughput: &v1alpha1.Throughput{RequestsPerSecond: "200.00"}}},
	}
}

// TestQuickstartReportReadsRight: the report of a steady 30 s run, in a real browser, draws a
// curve in every chart, its throughput from zero (not a climb from 192 to 200), its memory axis
// with ticks that read differently, and legends without empty "--" slots.
func TestQuickstartReportReadsRight(t *testing.T) {
	tl := quickstartTimeline()
	path := render(t, "quickstart-report.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: quickstartRun(), Timeline: tl})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"throughput": quickWindows, "latency": quickWindows, "errors": quickWindows, "target": quickSamples,
	}); err != nil {
		t.Error(err)
	}
	for _, name := range []string{"throughput", "errors", "target"} {
		c, _ := res.Chart(name)
		if c.YMin != 0 {
			t.Errorf("%s: the y axis starts at %g, want 0", name, c.YMin)
		}
		if c.Y2Min != nil && *c.Y2Min != 0 {
			t.Errorf("%s: the right axis starts at %g, want 0", name, *c.Y2Min)
		}
	}
	if c, _ := res.Chart("throughput"); c.YMax < 200 || c.YMax > 300 {
		t.Errorf("throughput: the y axis ends at %g, want the 200 req/s within it and no more than a step above", c.YMax)
	}
	for _, c := range res.Charts {
		for side, ticks := range map[string][]string{"left": c.YTicks, "right": c.Y2Ticks} {
			if c.Name == "target" && side == "left" && len(ticks) < 3 {
				t.Errorf("target: memory axis has ticks %q, want several", ticks)
			}
			if labelled := slices.DeleteFunc(slices.Clone(ticks), func(s string) bool { return s == "" }); len(slices.Compact(slices.Sorted(slices.Values(labelled)))) != len(labelled) {
				t.Errorf("%s: the %s axis repeats a tick label: %q", c.Name, side, ticks)
			}
		}
		if len(c.Legend) == 0 {
			t.Errorf("%s: no legend", c.Name)
		}
		for _, slot := range c.Legend {
			if strings.Contains(slot, "--") || strings.Contains(slot, "–") || strings.HasSuffix(slot, ":") || strings.HasPrefix(slot, "time") {
				t.Errorf("%s: the legend off the cursor shows an empty slot %q (legend %q)", c.Name, slot, c.Legend)
			}
		}
		// On a point, each slot has its value.
		values := 0
		for _, slot := range c.LegendHover {
			if label, value, ok := strings.Cut(slot, ": "); ok && strings.TrimSpace(value) != "" && value != "--" {
				values++
			} else {
				t.Errorf("%s: the legend on a point has slot %q (%s) without a value", c.Name, slot, label)
			}
		}
		if values == 0 {
			t.Errorf("%s: the legend on a point shows no value: %q", c.Name, c.LegendHover)
		}
	}
}

// quickstartRunner is one of examples/quickstart's 2 runners as its envelope holds it: a
// constant-arrival-rate scenario of 100 req/s for 30 s in 1 s windows (what a 30 s script now
// gets), 50 pre-allocated VUs (vus_max) and k6's once-a-second vus, the VUs inside an
// iteration at that instant: 0 mostly, against a target that answers in a millisecond.
func quickstartRunner(name string, tick time.Duration, busyEvery int) measure.Envelope {
	c := measure.NewCollector(measure.CollectorConfig{Window: time.Second, MaxWindows: 60}, loadStart)
	ok := map[string]string{"scenario": "load", "expected_response": "true", "status_class": "2xx"}
	for s := range quickWindows {
		for r := range 100 {
			ts := loadStart.Add(time.Duration(s)*time.Second + time.Duration(r)*10*time.Millisecond).UnixNano()
			c.Series("http_reqs", measure.Counter, "", ok).Add(ts, 1)
			c.Series("http_req_duration", measure.Trend, "time", ok).Add(ts, 1+float64(r%5)/10)
			c.Series("iterations", measure.Counter, "", map[string]string{"scenario": "load"}).Add(ts, 1)
		}
		busy := 0.0
		if s%busyEvery == 0 {
			busy = 1
		}
		ts := loadStart.Add(time.Duration(s)*time.Second + tick).UnixNano()
		c.Series("vus", measure.Gauge, "", nil).Add(ts, busy)
		c.Series("vus_max", measure.Gauge, "", nil).Add(ts, 50)
	}
	e := c.Envelope(loadStart.Add(quickWindows * time.Second))
	e.Runner, e.Final = name, true
	return e
}

// TestQuickstartDrawsItsVUs: the quickstart's report, from its runners' envelopes merged as the
// operator merges them, draws the 100 VUs allocated and the few in use on the throughput
// chart's right axis, in a real browser; the VUs line no longer reads 0 throughout.
func TestQuickstartDrawsItsVUs(t *testing.T) {
	s, err := measure.Merge(quickstartRunner("quickstart-runner-0", 300*time.Millisecond, 3),
		quickstartRunner("quickstart-runner-1", 800*time.Millisecond, 5))
	if err != nil {
		t.Fatal(err)
	}
	tl := judge.BuildTimeline(&s, nil)
	path := render(t, "quickstart-vus.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: quickstartRun(), Timeline: &tl})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"throughput": quickWindows, "latency": quickWindows, "errors": quickWindows, "latency-histogram": len(tl.Latency),
	}); err != nil {
		t.Error(err)
	}
	c, _ := res.Chart("throughput")
	t.Logf("throughput lines: %v", c.Lines)
	allocated, ok := c.Line("VUs allocated")
	switch {
	case !ok:
		t.Errorf("no VUs allocated line: %v", c.Lines)
	case allocated.Scale != "y2" || allocated.Values != quickWindows || allocated.Min == nil || *allocated.Min != 100 || *allocated.Max != 100:
		t.Errorf("VUs allocated %v, want 100 in each of %d windows on the right axis", allocated, quickWindows)
	}
	inUse, ok := c.Line("VUs in use")
	// Runner 0 is busy at every third tick, runner 1 at every fifth: at second 0 both are.
	switch {
	case !ok:
		t.Errorf("no VUs in use line: %v", c.Lines)
	case inUse.Scale != "y2" || inUse.Values != quickWindows || inUse.Min == nil || *inUse.Min != 0 || *inUse.Max != 2:
		t.Errorf("VUs in use %v, want 0 to 2 in each of %d windows on the right axis", inUse, quickWindows)
	}
	if c.Y2Max == nil || *c.Y2Max < 100 {
		t.Errorf("the right axis ends below the 100 VUs allocated (%v)", c.Y2Ticks)
	}
}
