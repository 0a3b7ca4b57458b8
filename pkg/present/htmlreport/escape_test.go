package htmlreport

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// hostile is markup a user controls through names, messages, threshold expressions, profiles
// and sweep values; the report must show it as text and never let it out of its <script> data.
const hostile = `</script><img src=x onerror="alert(1)">`

// dataBlock is the charts' JSON, as the page's script reads it.
var dataBlock = regexp.MustCompile(`(?s)<script type="application/json" id="fleetbench-data">(.*?)</script>`)

// checkEscaped asserts the markup appears only escaped, and that the embedded JSON carries it
// intact once parsed (so chart labels show the user's text, not a mangled one).
func checkEscaped(t *testing.T, page []byte, inData bool) {
	t.Helper()
	if bytes.Contains(page, []byte("<img src=x")) || bytes.Contains(page, []byte(`onerror="alert`)) {
		t.Errorf("the report carries the markup unescaped")
	}
	if !bytes.Contains(page, []byte("&lt;/script&gt;&lt;img src=x onerror=")) {
		t.Errorf("the report does not show the markup as escaped text")
	}
	m := dataBlock.FindSubmatch(page)
	if m == nil {
		t.Fatal("no chart data block")
	}
	if bytes.Contains(bytes.ToLower(m[1]), []byte("</")) || bytes.Contains(m[1], []byte("<")) {
		t.Errorf("the chart data block holds a raw '<': %.200s", m[1])
	}
	var data struct{ Charts []Chart }
	if err := json.Unmarshal(m[1], &data); err != nil {
		t.Fatalf("chart data: %v", err)
	}
	found := false
	for _, c := range data.Charts {
		for _, s := range c.Series {
			found = found || strings.Contains(s.Label, hostile)
		}
	}
	if found != inData {
		t.Errorf("the markup is in a chart label: %v, want %v", found, inData)
	}
}

func TestTestRunReportEscapes(t *testing.T) {
	run := fixtureTestRun()
	run.Status.Message = hostile
	run.Status.GeneratorBoundReason = hostile
	run.Status.Results.Thresholds = append(run.Status.Results.Thresholds,
		v1alpha1.ThresholdResult{Metric: "http_req_duration", Expression: hostile, Value: "1"})
	run.Status.Results.Warnings = []string{hostile}
	var buf bytes.Buffer
	if err := WriteTestRun(&buf, TestRunInput{Run: run, Timeline: fixtureTimeline()}); err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, buf.Bytes(), false)
}

func TestPlanReportEscapes(t *testing.T) {
	plan := fixturePlan()
	plan.Status.Message = hostile
	for i := range plan.Status.Table {
		plan.Status.Table[i].Profile = hostile
	}
	var buf bytes.Buffer
	if err := WritePlan(&buf, PlanInput{Plan: plan}); err != nil {
		t.Fatal(err)
	}
	checkEscaped(t, buf.Bytes(), true)
}
