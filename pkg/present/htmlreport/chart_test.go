package htmlreport

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func names(charts []Chart) []string {
	var out []string
	for _, c := range charts {
		out = append(out, c.Name)
	}
	return out
}

func labels(c Chart) []string {
	var out []string
	for _, s := range c.Series {
		out = append(out, s.Label)
	}
	return out
}

func TestTestRunCharts(t *testing.T) {
	tl := fixtureTimeline()
	tl.Windows[0].Requests = 0 // a window without requests has no quantiles
	charts := TestRunCharts(tl)
	if got, want := names(charts), []string{"throughput", "latency", "errors", "target", "latency-histogram"}; !slices.Equal(got, want) {
		t.Fatalf("charts %v, want %v", got, want)
	}
	for _, c := range charts {
		for _, s := range c.Series {
			if len(s.Values) != len(c.X) {
				t.Errorf("%s/%s: %d values for %d x", c.Name, s.Label, len(s.Values), len(c.X))
			}
		}
	}
	if x := charts[0].X[1] - charts[0].X[0]; x != 10 {
		t.Errorf("windows %v s apart, want 10", x)
	}
	if got := charts[1].Series[0].Points(); got != fixtureWindows-1 {
		t.Errorf("latency p50 has %d points, want %d (the empty window is a gap)", got, fixtureWindows-1)
	}
	target := charts[3]
	if !math.IsNaN(float64(target.Series[1].Values[0])) {
		t.Errorf("the first CPU point is %v, want a gap", target.Series[1].Values[0])
	}
	var marks []string
	for _, m := range target.Marks {
		marks = append(marks, m.Label)
	}
	if want := []string{"restarts: 1", "load start", "load end"}; !slices.Equal(marks, want) {
		t.Errorf("target marks %v, want %v", marks, want)
	}
	if target.Marks[1].X != float64(loadStart.Unix()) {
		t.Errorf("load start at %v, want %v", target.Marks[1].X, loadStart.Unix())
	}
	if TestRunCharts(nil) != nil {
		t.Error("charts without a timeline")
	}
	tl.Target, tl.Latency = nil, nil
	if got, want := names(TestRunCharts(tl)), []string{"throughput", "latency", "errors"}; !slices.Equal(got, want) {
		t.Errorf("without target samples and histogram: %v, want %v", got, want)
	}
}

func TestPlanChartsSweep(t *testing.T) {
	peak := fixturePeakChild()
	charts := PlanCharts(fixturePlan(), []v1alpha1.TestRun{peak})
	// A push benchmark: every answer carries the same bytes, so no round-trip/goodput chart.
	if got, want := names(charts), []string{"plan-throughput", "plan-latency", "peak-peakr-64-max-c2"}; !slices.Equal(got, want) {
		t.Fatalf("charts %v, want %v", got, want)
	}
	tp := charts[0]
	if !slices.Equal(tp.X, []float64{1, 2, 4, 8}) || tp.XLabel != "WORKERS" || tp.YLabel != "pushes/s" {
		t.Errorf("throughput x %v %q y %q", tp.X, tp.XLabel, tp.YLabel)
	}
	if want := []string{"C1", "C2"}; !slices.Equal(labels(tp), want) {
		t.Errorf("throughput series %v, want %v: a line per profile, the repetitions as a band", labels(tp), want)
	}
	// C1, WORKERS 1: 122.5 pushes/s in run 1 and 119.5 in run 2 (fixturePlan).
	if len(tp.Bands) != 2 || float64(tp.Series[0].Values[0]) != 121 || float64(tp.Bands[0].Low[0]) != 119.5 || float64(tp.Bands[0].High[0]) != 122.5 {
		t.Errorf("C1 WORKERS=1 pushes %v within %+v, want the median 121 within 119.5–122.5", tp.Series[0].Values[0], tp.Bands)
	}
	lat := charts[1]
	if want := []string{"C1 · avg", "C1 · p95", "C1 · p99", "C2 · avg", "C2 · p95", "C2 · p99"}; !slices.Equal(labels(lat), want) {
		t.Errorf("latency series %v, want %v: a line per profile and quantile, the repetitions as a band", labels(lat), want)
	}
	if len(lat.Bands) != len(lat.Series) || lat.Bands[0].Series != 0 {
		t.Fatalf("latency bands %+v, want one per series", lat.Bands)
	}
	// C1, WORKERS 1: avg 10 ms in run 1 and 9 ms in run 2 (fixturePlan).
	if b := lat.Bands[0]; float64(b.Low[0]) != 9 || float64(b.High[0]) != 10 || float64(lat.Series[0].Values[0]) != 9.5 {
		t.Errorf("C1 avg at WORKERS 1: median %v, band %v–%v, want 9.5 within 9–10", lat.Series[0].Values[0], b.Low[0], b.High[0])
	}
	if tp.LogX {
		t.Errorf("WORKERS 1 to 8 on a log axis")
	}
	pk := charts[2]
	if len(pk.X) != fixturePeakSteps || len(pk.Marks) != 2 || pk.Marks[0].X != 7000 || !pk.Marks[1].Alert {
		t.Errorf("peak chart x %v marks %+v", pk.X, pk.Marks)
	}
}

// TestPlanChartsPayloadSweep: seed 004's payload sizes (64 B to 64 KiB) go on a log axis, RTT
// on the left and goodput on the right, a point of each at every size.
func TestPlanChartsPayloadSweep(t *testing.T) {
	charts := PlanCharts(fixturePayloadPlan(), nil)
	if got, want := names(charts), []string{"plan-throughput", "plan-latency", "plan-rtt-goodput"}; !slices.Equal(got, want) {
		t.Fatalf("charts %v, want %v", got, want)
	}
	rtt := charts[2]
	if !slices.Equal(rtt.X, fixturePayloads) || !rtt.LogX || rtt.XLabel != "PAYLOAD_BYTES" {
		t.Errorf("x %v log %v label %q: want the payload sizes on a log axis", rtt.X, rtt.LogX, rtt.XLabel)
	}
	if want := []string{"C1 · RTT ms", "C1 · goodput Mb/s"}; !slices.Equal(labels(rtt), want) {
		t.Errorf("series %v, want %v", labels(rtt), want)
	}
	for _, s := range rtt.Series {
		if s.Points() != len(fixturePayloads) {
			t.Errorf("%s has %d points, want %d", s.Label, s.Points(), len(fixturePayloads))
		}
	}
	if first, last := float64(rtt.Series[0].Values[0]), float64(rtt.Series[0].Values[5]); first != 0.45 || last <= first {
		t.Errorf("RTT %v ms at 64 B and %v ms at 64 KiB", first, last)
	}
}

func TestPlanChartsOtherDimensions(t *testing.T) {
	p := fixturePlan()
	p.Spec.Sweep = append(p.Spec.Sweep, v1alpha1.SweepDimension{Component: "web", Field: "tls", Values: []string{"true", "false"}})
	for i := range p.Status.Table {
		p.Status.Table[i].Values["web.tls"] = []string{"true", "false"}[i%2]
		p.Status.Table[i].Repetition = 1
		p.Status.Table[i].ReceivedMbps = ""
	}
	charts := PlanCharts(p, nil)
	if got, want := names(charts), []string{"plan-throughput", "plan-latency"}; !slices.Equal(got, want) {
		t.Fatalf("charts %v, want %v (no goodput, no peak child)", got, want)
	}
	want := []string{"C1 web.tls=true", "C1 web.tls=false", "C2 web.tls=true", "C2 web.tls=false"}
	if !slices.Equal(labels(charts[0]), want) {
		t.Errorf("series %v, want %v", labels(charts[0]), want)
	}

	// No numeric dimension: one x position per profile and value.
	p.Spec.Sweep = p.Spec.Sweep[1:]
	for i := range p.Status.Table {
		delete(p.Status.Table[i].Values, "WORKERS")
	}
	c := PlanCharts(p, nil)[0]
	if c.Kind != KindCategory || !slices.Equal(c.XNames, want) || len(c.X) != 4 {
		t.Errorf("category chart kind %q names %v x %v", c.Kind, c.XNames, c.X)
	}

	// No sweep at all and rows still waiting: no chart.
	empty := &v1alpha1.CapacityPlan{Spec: v1alpha1.CapacityPlanSpec{Profiles: []string{"C1"}},
		Status: v1alpha1.CapacityPlanStatus{Table: []v1alpha1.CapacityRow{{Profile: "C1"}}}}
	if got := PlanCharts(empty, nil); len(got) != 0 {
		t.Errorf("charts of a plan without numbers: %v", names(got))
	}
}

func TestValueJSON(t *testing.T) {
	b, err := json.Marshal(Series{Label: "x", Values: []Value{1.5, Gap, Value(math.Inf(1)), 3}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"label":"x","values":[1.5,null,null,3],"color":0}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestParseMillis(t *testing.T) {
	for in, want := range map[string]float64{"11ms": 11, "1.25s": 1250, "850µs": 0.85, "12": 12, "13.20ms": 13.2} {
		if got, ok := parseMillis(in); !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("parseMillis(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	if _, ok := parseMillis("n/a"); ok {
		t.Error("parseMillis(n/a) succeeded")
	}
	if got := ordinal(2) + "," + ordinal(11) + "," + ordinal(23); got != "2nd run,11th run,23rd run" {
		t.Errorf("ordinals %s", got)
	}
	if got := utc(time.Date(2025, 3, 14, 10, 0, 0, 0, time.FixedZone("CET", 3600))); got != "2025-03-14 09:00:00 UTC" {
		t.Errorf("utc %s", got)
	}
}
