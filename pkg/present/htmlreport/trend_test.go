package htmlreport

import (
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
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
