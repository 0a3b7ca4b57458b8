package htmlreport

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// TestTargetChartDrawsTheTrend: the fixture's memory climbs 13 MiB in 5 minutes (156 MiB/h);
// its trend after a 60 s warm-up is drawn from there to the last sample fitted, on the
// fixture's own points, and the verdict is the chart's note. An insufficient trend is a note
// without a line.
func TestTargetChartDrawsTheTrend(t *testing.T) {
	run := fixtureTestRun()
	end := metav1.NewTime(loadStart.Add(300 * time.Second))
	run.Status.Target = &v1alpha1.TargetUsage{Memory: &v1alpha1.MemoryUsage{Trend: &v1alpha1.MemoryTrend{
		Verdict: "leak", SlopeMiBPerHour: "156.000", FitEndMiB: "57.000", FitEnd: &end, WarmUpSeconds: 60,
		Message: "memory grows 156 MiB/h"}}}
	target := chartNamed(t, withTrend(TestRunCharts(fixtureTimeline()), run), "target")
	line := target.Series[len(target.Series)-1]
	if !line.Dash || !strings.Contains(line.Label, "leak, 156.000 MiB/h") || !strings.Contains(target.Note, "memory trend: leak") {
		t.Fatalf("trend series %+v, note %q", line, target.Note)
	}
	drawn := 0
	for i, x := range target.X {
		at := time.Unix(0, int64(x*1e9)).UTC()
		v := float64(line.Values[i])
		if at.Before(loadStart.Add(60*time.Second)) || at.After(end.Time) {
			if !math.IsNaN(v) {
				t.Errorf("at %s the trend is %v, want a gap outside the fit", at, v)
			}
			continue
		}
		drawn++
		// The line lies on the fixture's points (44 MiB + 13 MiB per 300 s since the load's start).
		if want := 44 + 13*at.Sub(loadStart).Seconds()/300; math.Abs(v-want) > 0.01 {
			t.Errorf("at %s the trend is %.3f, want %.3f", at, v, want)
		}
	}
	if drawn != 17 { // every 15 s from 60 s to 300 s
		t.Errorf("trend drawn at %d points, want 17", drawn)
	}

	run.Status.Target.Memory.Trend = &v1alpha1.MemoryTrend{Verdict: "insufficient", Message: "7 memory samples after a warm-up of 1m0s: the trend needs 10"}
	target = chartNamed(t, withTrend(TestRunCharts(fixtureTimeline()), run), "target")
	if len(target.Series) != 2 || !strings.Contains(target.Note, "insufficient. 7 memory samples") {
		t.Errorf("insufficient: %d series, note %q", len(target.Series), target.Note)
	}
}

// TestRunnerMemoryChartDrawsItsTrend: the timeline's runner memory (the runner
// status.runners.memory.trend is of) is a chart of its own, saying it is the generator's
// memory, with the fitted line over the last Samples points up to fitEnd; the page has it.
// Without those points there is no such chart.
func TestRunnerMemoryChartDrawsItsTrend(t *testing.T) {
	tl := fixtureTimeline()
	if c := TestRunCharts(tl); slices.ContainsFunc(c, func(c Chart) bool { return c.Name == runnerMemoryChartName }) {
		t.Fatal("a runner memory chart without runner memory points")
	}
	rm := &judge.RunnerMemorySeries{Runner: "demo-runner-2"}
	for i := range 30 { // 10 s windows, a 20 s warm-up, then 12 MiB a minute (720 MiB/h)
		rm.Points = append(rm.Points, judge.MemoryPoint{At: loadStart.Add(time.Duration(i+1) * 10 * time.Second), MiB: 80 + 2*float64(i)})
	}
	tl.RunnerMemory = rm
	run := fixtureTestRun()
	end := metav1.NewTime(loadStart.Add(300 * time.Second))
	run.Status.Runners = &v1alpha1.RunnerCounts{Desired: 3, Memory: &v1alpha1.RunnerMemory{Runner: "demo-runner-2", Leaking: 1, Fitted: 3,
		Trend: &v1alpha1.MemoryTrend{Verdict: "leak", SlopeMiBPerHour: "720.000", FitEndMiB: "138.000", FitEnd: &end, Samples: 28,
			Message: "runner demo-runner-2: memory grows 720 MiB/h"}}}
	c := chartNamed(t, withTrend(TestRunCharts(tl), run), runnerMemoryChartName)
	if len(c.Series) != 2 || !strings.Contains(c.Title, "demo-runner-2") || !strings.Contains(c.Note, "not the target's): leak. runner demo-runner-2: memory grows") {
		t.Fatalf("runner memory chart %q, note %q, %d series", c.Title, c.Note, len(c.Series))
	}
	line := c.Series[1]
	if !line.Dash || !strings.Contains(line.Label, "leak, 720.000 MiB/h") || line.Points() != 28 {
		t.Fatalf("trend series %+v, want 28 points", line)
	}
	for i, x := range c.X {
		if v := float64(line.Values[i]); i >= 2 && math.Abs(v-float64(c.Series[0].Values[i])) > 0.01 {
			t.Errorf("at %v the trend is %.3f, the memory %.3f", x, v, float64(c.Series[0].Values[i]))
		}
	}

	var page strings.Builder
	if err := WriteTestRun(&page, TestRunInput{Run: run, Timeline: tl}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `data-chart="runner-memory"`) || !strings.Contains(page.String(), "Runner memory (demo-runner-2, the load generator&#39;s own)") {
		t.Error("the page has no runner memory chart")
	}
}
