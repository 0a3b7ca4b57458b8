package htmlreport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/compare"
	"fleetbench.dev/fleetbench/pkg/judge/shift"
)

// fixtureShift is 8 runs: throughput falls from 1000 to 800 at run 4; memory has no point.
func fixtureShift() ShiftInput {
	t0 := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	in := ShiftInput{Namespace: "perf", Selector: "test=ingest", OrderBy: "completion", Method: "E-Divisive means",
		Generated: t0.Add(24 * time.Hour)}
	rps := shift.Metric{Name: compare.SeriesThroughput, Unit: "req/s", Direction: v1alpha1.HigherIsBetter}
	mem := shift.Metric{Name: compare.SeriesTargetMemory, Unit: "MiB", Direction: v1alpha1.LowerIsBetter}
	for i := range 8 {
		in.Trend.Runs = append(in.Trend.Runs, compare.RunRef{Name: fmt.Sprintf("ingest-%d", i), CompletionTime: t0.Add(time.Duration(i) * time.Hour), Verdict: "PASSED"})
		v := 1000.0 + float64(i%2)
		if i >= 4 {
			v = 800 + float64(i%2)
		}
		rps.Values = append(rps.Values, shift.Value{Run: i, Value: v})
		mem.Values = append(mem.Values, shift.Value{Run: i, Value: 300})
	}
	rps.ChangePoints = []shift.ChangePoint{{Index: 4, Before: 1000.5, After: 800.5, ShiftPercent: -19.99, PValue: 0.005, Direction: shift.Worse}}
	in.Trend.Metrics = []shift.Metric{rps, mem}
	return in
}

func TestWriteShift(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteShift(&buf, fixtureShift()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`data-figure="trend-0"`, `data-figure="trend-1"`, // a chart per metric
		`class="peak change"`, "-20.0 % worse (p 0.005)", // the change point marked
		`<tr data-row="ingest-4"><td>ingest-4</td><td class="num">1000</td><td class="num">800</td><td class="num fail-text">-20.0 %</td>`,
		"no change point", // memory
		"throughput (req/s)", "targetMemory (MiB)", "test=ingest", "8 kept runs",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `class="peak change"`); n != 1 {
		t.Errorf("%d change marks, want 1", n)
	}
	// Self-contained and static: no script, nothing fetched.
	for _, bad := range []string{"<script", "http://", "https://", "src="} {
		if strings.Contains(page, bad) {
			t.Errorf("the page carries %q", bad)
		}
	}
}

func TestWriteShiftEscapes(t *testing.T) {
	in := fixtureShift()
	in.Trend.Runs[4].Name = hostile
	in.RunLabels = make([]string, len(in.Trend.Runs))
	in.RunLabels[4] = hostile
	in.Selector, in.Notes = hostile, []string{hostile}
	var buf bytes.Buffer
	if err := WriteShift(&buf, in); err != nil {
		t.Fatal(err)
	}
	if page := buf.String(); strings.Contains(page, "<img src=x") || !strings.Contains(page, "&lt;/script&gt;&lt;img src=x onerror=") {
		t.Errorf("the hostile name is not shown escaped")
	}
}

func TestShiftValue(t *testing.T) {
	for v, want := range map[float64]string{1234.56: "1235", 12.345: "12.35", 0.12345: "0.1235", -5: "-5.00"} {
		if got := ShiftValue(v); got != want {
			t.Errorf("ShiftValue(%g) = %q, want %q", v, got, want)
		}
	}
	if got := MetricTitle(shift.Metric{Name: "latencyP95", Stat: "p95", Unit: "ms"}); got != "latencyP95 (ms)" {
		t.Errorf("title %q", got)
	}
	if got := MetricTitle(shift.Metric{Name: "http_reqs", Stat: "rate", Unit: "/s"}); got != "http_reqs rate (/s)" {
		t.Errorf("title %q", got)
	}
}
