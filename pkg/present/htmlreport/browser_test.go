package htmlreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/present/htmlreport/browsertest"
)

// externalRef finds anything that would load from elsewhere.
var externalRef = regexp.MustCompile(`(?i)https?://|(src|href)\s*=\s*"//|@import|url\(`)

// render writes a report into a temporary directory and checks it is self-contained.
func render(t *testing.T, name string, write func(w *bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatalf("writing %s: %v", name, err)
	}
	if loc := externalRef.FindIndex(buf.Bytes()); loc != nil {
		t.Errorf("%s names an external resource: %q", name, buf.Bytes()[max(0, loc[0]-60):min(buf.Len(), loc[1]+60)])
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// inBrowser runs the real-browser check and keeps the screenshot where FLEETBENCH_ARTIFACTS
// says (bin/artifacts with make test; the test's temporary directory when unset).
func inBrowser(t *testing.T, htmlPath string) browsertest.Result {
	t.Helper()
	shot := strings.TrimSuffix(htmlPath, ".html") + ".png"
	res, err := browsertest.Check(context.Background(), htmlPath, shot)
	if err != nil {
		t.Fatalf("browser check of %s: %v", htmlPath, err)
	}
	kept := shot
	if dir := os.Getenv("FLEETBENCH_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		kept = filepath.Join(dir, filepath.Base(shot))
		b, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(kept, b, 0o644)
		}
		if err != nil {
			t.Fatalf("keeping the screenshot: %v", err)
		}
	}
	t.Logf("screenshot: %s", kept)
	for _, c := range res.Charts {
		t.Logf("chart %-22s points %3d values %4d series %2d coloured pixels %d", c.Name, c.Points, c.Values, c.Series, c.ColoredPixels)
	}
	if len(res.Requests) == 0 {
		t.Errorf("the request recorder saw no request at all, not even the page's own file: URL")
	}
	return res
}

func TestTestRunReportInBrowser(t *testing.T) {
	run, tl := fixtureTestRun(), fixtureTimeline()
	path := render(t, "testrun-report.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: run, Timeline: tl})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"throughput": fixtureWindows, "latency": fixtureWindows, "errors": fixtureWindows,
		"target": fixtureTargetPoints, "latency-histogram": fixtureBuckets,
	}); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"FAILED", "p(99)<50", "generator-bound", "demo-runner-2", "register", "body has id",
		"177.37", "restarts: 1"} {
		if !strings.Contains(res.Text, want) && !strings.Contains(res.Title, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if strings.Contains(res.Text, "full result was not kept") {
		t.Errorf("the page says the full result was not kept, but the timeline was given")
	}
}

func TestPlanReportInBrowser(t *testing.T) {
	plan, peak := fixturePlan(), fixturePeakChild()
	path := render(t, "plan-report.html", func(w *bytes.Buffer) error {
		return WritePlan(w, PlanInput{Plan: plan, Children: []v1alpha1.TestRun{peak},
			ChildHref: func(name string) string { return name + ".html" }})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"plan-throughput": 4, "plan-latency": 4, "peak-" + peak.Name: fixturePeakSteps,
	}); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"Succeeded", "Sizing", "39680", "Pushes per second by WORKERS", "Breaking point Reached",
		"bench-6-ssl-C2-w8-r2"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if c, _ := res.Chart("plan-throughput"); c.Series != 2 {
		t.Errorf("plan-throughput has %d series and legend %q, want 2 (a line per profile; repetitions as a band)", c.Series, c.Legend)
	}
	if c, _ := res.Chart("plan-latency"); c.Series != 6 || len(c.Legend) > maxLegend+1 {
		t.Errorf("plan-latency has %d series and legend %q, want 6 (2 profiles × avg, p95, p99; repetitions as a band)", c.Series, c.Legend)
	}
}

// TestPayloadPlanReportInBrowser: seed 004's plan, RTT and goodput against payload size, draws a
// point of each series at every payload the plan swept.
func TestPayloadPlanReportInBrowser(t *testing.T) {
	plan := fixturePayloadPlan()
	path := render(t, "payload-plan-report.html", func(w *bytes.Buffer) error {
		return WritePlan(w, PlanInput{Plan: plan})
	})
	res := inBrowser(t, path)
	n := len(fixturePayloads)
	if err := browsertest.Verify(res, map[string]int{"plan-throughput": n, "plan-latency": n, "plan-rtt-goodput": n}); err != nil {
		t.Error(err)
	}
	c, _ := res.Chart("plan-rtt-goodput")
	if !slices.Equal(c.X, fixturePayloads) {
		t.Errorf("plan-rtt-goodput has x %v, want the payload sizes %v", c.X, fixturePayloads)
	}
	// Two series (RTT on the left, goodput on the right), each with a value at every payload.
	if c.Series != 2 || c.Values != 2*n {
		t.Errorf("plan-rtt-goodput has %d series with %d values, want 2 with %d", c.Series, c.Values, 2*n)
	}
	for _, want := range []string{"Round-trip time and goodput by PAYLOAD_BYTES", "PAYLOAD_BYTES", "65536", "ouroboros-payload-c1-64"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// TestZonedRunReportInBrowser: a zoned run's report has its zones' table and their latency
// drawn side by side, a point of each quantile at every zone.
func TestZonedRunReportInBrowser(t *testing.T) {
	run, tl := fixtureTestRun(), fixtureTimeline()
	run.Status.Zones = []v1alpha1.ZoneStatus{
		{Name: "home", Runners: 2, State: v1alpha1.ZoneEnded, StartOffset: "1.2ms", Requests: 2000, FailedRequests: 3,
			Latency: &v1alpha1.Latency{Avg: "4.10ms", P50: "3.80ms", P95: "9.20ms", P99: "14.0ms"}},
		{Name: "c2", Cluster: "cluster-2", Run: "demo-zone-c2", Runners: 2, State: v1alpha1.ZoneEnded, StartOffset: "0s", Requests: 2001,
			Latency: &v1alpha1.Latency{Avg: "7.30ms", P50: "6.90ms", P95: "18.5ms", P99: "27.1ms"}},
	}
	path := render(t, "zoned-report.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: run, Timeline: tl})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"throughput": fixtureWindows, "latency": fixtureWindows, "errors": fixtureWindows,
		"target": fixtureTargetPoints, "latency-histogram": fixtureBuckets, "zone-latency": 2,
	}); err != nil {
		t.Error(err)
	}
	if c, _ := res.Chart("zone-latency"); c.Series != 4 || c.Values != 8 {
		t.Errorf("zone-latency has %d series with %d values, want avg, p50, p95 and p99 at both zones (8)", c.Series, c.Values)
	}
	for _, want := range []string{"Latency by zone", "Zones", "cluster-2", "18.5ms", "2001"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

func TestTestRunReportWithoutTimeline(t *testing.T) {
	run := fixtureTestRun()
	path := render(t, "testrun-no-timeline.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: run})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{}); err != nil {
		t.Error(err)
	}
	for _, want := range []string{"The full result was not kept", "FAILED", "p(99)<50", "push", "status is 200"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

func TestCheckFailsWithoutPage(t *testing.T) {
	if _, err := browsertest.Check(context.Background(), filepath.Join(t.TempDir(), "missing.html"), ""); err == nil {
		t.Fatal("checking a missing file succeeded")
	}
}

// TestCheckSeesNetworkRequests proves the recorder: a page that loads an image from elsewhere
// fails Verify even though the emulated offline network refuses it.
func TestCheckSeesNetworkRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leaky.html")
	page := `<!DOCTYPE html><html><body><img src="http://192.0.2.1/pixel.png"><script>window.fleetbenchReady = true;</script></body></html>`
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := browsertest.Check(context.Background(), path, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NonFileRequests) == 0 {
		t.Fatalf("no non-file request recorded; requests %v", res.Requests)
	}
	if err := browsertest.Verify(res, map[string]int{}); err == nil {
		t.Error("Verify accepted a page that made a network request")
	}
}

// TestSizingPlanReportInBrowser: issue 27's plan (ranges, limits, a USL fit trusted and one
// not, a predicted and measured size, an answer with its cost) draws its capacity chart and
// USL curves as laid-out SVG, beside the uPlot charts, with no page error.
func TestSizingPlanReportInBrowser(t *testing.T) {
	plan := fixtureSizingPlan()
	path := render(t, "sizing-plan-report.html", func(w *bytes.Buffer) error {
		return WritePlan(w, PlanInput{Plan: plan})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{"plan-throughput": 2, "plan-latency": 2}); err != nil {
		t.Error(err)
	}
	if c, _ := res.Chart("plan-latency"); c.Series != 4 || len(c.Legend) > maxLegend {
		t.Errorf("plan-latency: %d series, legend %q; want 4 (p95 per profile)", c.Series, c.Legend)
	}
	for _, tc := range []struct {
		name           string
		circles, paths int
		rects          int
		text           []string
	}{
		// 4 measured + 1 predicted points, 2 best points, the legend's point; whiskers and the
		// held-out cross; 5 bars and 2 legend swatches.
		{"capacity", 4 + 1 + 2 + 1, 4 + 2 + 1 + 1 + 1, 5 + 2, []string{"C1", "C4", "memory", "generator", "target", "predicted · cpu", "measured, error +4.3 %"}},
		{"usl-0", len(fixtureUSLLoads) + 1, 2, 0, []string{"peak N = 21.8", "USL fit", "load N: devices"}},
		{"usl-1", 2 + 1, 2, 0, []string{"USL fit (untrusted)", "load N: WORKERS"}},
	} {
		f, ok := res.Figure(tc.name)
		if !ok {
			t.Errorf("figure %s is missing", tc.name)
			continue
		}
		t.Logf("figure %-8s %dx%d circles %d paths %d rects %d", f.Name, f.Width, f.Height, f.Circles, f.Paths, f.Rects)
		if f.Width < 400 || f.Height < 150 {
			t.Errorf("figure %s laid out %dx%d, too small to read", tc.name, f.Width, f.Height)
		}
		if f.Circles != tc.circles || f.Paths != tc.paths || f.Rects != tc.rects {
			t.Errorf("figure %s has %d circles, %d paths, %d rects; want %d, %d, %d", tc.name, f.Circles, f.Paths, f.Rects, tc.circles, tc.paths, tc.rects)
		}
		for _, want := range tc.text {
			if !strings.Contains(f.Text, want) {
				t.Errorf("figure %s does not label %q: %s", tc.name, want, f.Text)
			}
		}
	}
	for _, want := range []string{"Capacity by profile", "Sizing with ranges", "Scaling (USL)", "24000 (23280–24720, min–max)",
		"untrusted: σ < 0", "C3 holds 40000 devices", "146.00 EUR per month", "error +4.3 %"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if c, ok := res.Cell("C4/floor", "breaking"); !ok || c.Text != "—" {
		t.Errorf("C4's missing breaking point shows %q, want —", c.Text)
	}
}

// TestTestRunReportGapInBrowser: a run with one gap (runner 1 lost 120 s in, replaced 15 s
// later) shades it on every chart over time, as painted, not only as data, and the page says
// what the results cover.
func TestTestRunReportGapInBrowser(t *testing.T) {
	run, tl := fixtureGapRun(), fixtureTimeline()
	path := render(t, "testrun-gap-report.html", func(w *bytes.Buffer) error {
		return WriteTestRun(w, TestRunInput{Run: run, Timeline: tl})
	})
	res := inBrowser(t, path)
	if err := browsertest.Verify(res, map[string]int{
		"throughput": fixtureWindows, "latency": fixtureWindows, "errors": fixtureWindows,
		"target": fixtureTargetPoints, "latency-histogram": fixtureBuckets,
	}); err != nil {
		t.Error(err)
	}
	for _, c := range res.Charts {
		want := 1
		if c.Name == "latency-histogram" {
			want = 0
		}
		if len(c.Spans) != want {
			t.Errorf("chart %s has %d spans, want %d", c.Name, len(c.Spans), want)
			continue
		}
		for _, s := range c.Spans {
			t.Logf("chart %-12s span %q covered %.2f outside %.2f", c.Name, s.Label, s.Covered, s.Outside)
			// Shaded over the plot's whole height; beside it only the lines and grid.
			if s.Covered < 0.95 || s.Outside > 0.5 {
				t.Errorf("chart %s: the gap's column is %.0f %% painted, beside it %.0f %%; want a shaded span", c.Name, 100*s.Covered, 100*s.Outside)
			}
			if !strings.Contains(s.Label, "runner 1 lost (Deleted), replaced after 15s; ~1480 requests unobserved") {
				t.Errorf("chart %s: span labelled %q", c.Name, s.Label)
			}
		}
	}
	for _, want := range []string{"Gaps", "the results cover the load but 1 gap, about 1480 requests not made or not observed",
		"stab-2-2-c1-runner-1-r1", "2m45s"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if c, ok := res.Cell("gap-1-1", "after"); !ok || c.Text != "15s" {
		t.Errorf("the gap's time to replacement shows %q (found %v), want 15s", c.Text, ok)
	}
}
