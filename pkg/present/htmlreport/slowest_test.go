package htmlreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
	"fleetbench.dev/fleetbench/pkg/measure"
)

const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"

// slowTimeline is the fixture with slow requests: a traced one whose name is markup, one whose
// trace id is not hex (a ConfigMap anyone in the namespace may write), one without.
func slowTimeline() *judge.Timeline {
	tl := fixtureTimeline()
	start := loadStart.Add(42 * time.Second)
	tl.SlowestOfRun = []measure.SlowRequest{
		{DurationMillis: 1250, StartUnixNano: start.UnixNano(), Name: hostile, URL: "http://t/orders?id=1&x=2",
			Method: "POST", Status: "503", Runner: "demo-runner-1", TraceID: traceID},
		{DurationMillis: 900, StartUnixNano: start.Add(time.Second).UnixNano(), Name: "orders", TraceID: `javascript:alert(1)`},
		{DurationMillis: 850, StartUnixNano: start.Add(2 * time.Second).UnixNano(), Name: "orders"},
	}
	tl.Slowest = tl.SlowestOfRun
	return tl
}

func writeSlow(t *testing.T, tl *judge.Timeline, run *v1alpha1.TestRun, traceURL string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTestRun(&buf, TestRunInput{Run: run, Timeline: tl, TraceURL: traceURL}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestSlowestRequestsTableLinksTraces(t *testing.T) {
	page := writeSlow(t, slowTimeline(), fixtureTestRun(), "https://jaeger.example/trace/{traceID}?a=1&b=2")
	if !strings.Contains(page, "<h2>Slowest requests</h2>") || !strings.Contains(page, `data-table="slowest"`) {
		t.Fatal("no slowest requests table")
	}
	for _, want := range []string{
		`<a href="https://jaeger.example/trace/` + traceID + `?a=1&amp;b=2" rel="noopener noreferrer" target="_blank"><code>` + traceID + `</code></a>`,
		`<td class="num">1.25s</td><td class="num" title="2025-03-14 09:00:42 UTC">42.000s</td>`,
		`<td>POST</td><td class="num">503</td><td>demo-runner-1</td>`,
		`title="http://t/orders?id=1&amp;x=2"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the table lacks %s", want)
		}
	}
	// One link: the id that is not hex is neither linked nor shown.
	if n := strings.Count(page, `href="https://jaeger.example`); n != 1 {
		t.Errorf("%d trace links, want 1", n)
	}
	if strings.Contains(page, "javascript:") {
		t.Error("a trace id that is not hex is on the page")
	}
	checkEscaped(t, []byte(page), false)
}

func TestSlowestRequestsWithoutATemplateAreNotLinked(t *testing.T) {
	page := writeSlow(t, slowTimeline(), fixtureTestRun(), "")
	if !strings.Contains(page, "<code>"+traceID+"</code>") || strings.Contains(page, "<a href=\"http") {
		t.Error("without a template the trace id must be shown, not linked")
	}
}

func TestTraceURLTemplatesMustBeHTTP(t *testing.T) {
	for _, bad := range []string{"javascript:alert('{traceID}')", "http://jaeger/trace/", "/trace/{traceID}",
		"data:text/html,{traceID}", "ftp://x/{traceID}", "http://[::1/{traceID}"} {
		if err := CheckTraceURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
		var buf bytes.Buffer
		if err := WriteTestRun(&buf, TestRunInput{Run: fixtureTestRun(), TraceURL: bad}); err == nil {
			t.Errorf("a report with trace URL %q was written", bad)
		}
	}
	for _, ok := range []string{"http://jaeger.example/trace/{traceID}", "https://grafana.example/explore?left={\"query\":\"{traceID}\"}"} {
		if err := CheckTraceURL(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}

// TestSlowestRequestsFromStatus: without the full result the table comes from status.
func TestSlowestRequestsFromStatus(t *testing.T) {
	run := fixtureTestRun()
	run.Status.Results.SlowestRequests = []v1alpha1.SlowRequest{{Duration: "2.10s",
		Start: metav1.NewMicroTime(loadStart.Add(5 * time.Second)), Name: "checkout", Runner: "demo-runner-0", TraceID: traceID}}
	page := writeSlow(t, nil, run, "http://tempo.example/{traceID}")
	if !strings.Contains(page, `<td class="num">2.10s</td>`) || !strings.Contains(page, `href="http://tempo.example/`+traceID+`"`) {
		t.Error("the status' slowest requests are not in the table")
	}
}

// TestSlowestRequestsAreDotsOnTheLatencyChart: each window's slowest are points of the latency
// chart at (start, duration), within its left axis.
func TestSlowestRequestsAreDotsOnTheLatencyChart(t *testing.T) {
	page := writeSlow(t, slowTimeline(), fixtureTestRun(), "")
	m := dataBlock.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no chart data")
	}
	var data struct{ Charts []Chart }
	if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
		t.Fatal(err)
	}
	for _, c := range data.Charts {
		if c.Name != "latency" {
			if len(c.Points) > 0 {
				t.Errorf("chart %s has dots", c.Name)
			}
			continue
		}
		if len(c.Points) != 3 || c.Points[0].Y != 1250 || c.Points[0].X != float64(loadStart.Unix()+42) {
			t.Fatalf("dots: %+v", c.Points)
		}
		if c.YAxis == nil || c.YAxis.Max < 1250 {
			t.Errorf("the axis does not reach the slowest dot: %+v", c.YAxis)
		}
		return
	}
	t.Fatal("no latency chart")
}
