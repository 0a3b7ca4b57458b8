package htmlreport

import (
	"fmt"
	"strconv"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// withTrend draws the memory trends on their charts: status.target.memory.trend on the target
// chart, status.runners.memory.trend on the runner memory chart. Each is the fitted line over
// the samples fitted, dashed, labelled with the verdict and slope, and the trend's message as
// the chart's note. Without a fitted line (insufficient) only the note.
func withTrend(charts []Chart, run *v1alpha1.TestRun) []Chart {
	for i := range charts {
		c := &charts[i]
		switch {
		case c.Name == "target" && run.Status.Target != nil && run.Status.Target.Memory != nil && run.Status.Target.Memory.Trend != nil:
			tr := run.Status.Target.Memory.Trend
			c.Note = "memory trend: " + tr.Verdict + ". " + tr.Message
			if run.Status.StartTime != nil {
				// The target's warm-up is counted from the load's start.
				drawTrend(c, tr, unixSeconds(run.Status.StartTime.Add(time.Duration(tr.WarmUpSeconds)*time.Second)))
			}
		case c.Name == runnerMemoryChartName && run.Status.Runners != nil && run.Status.Runners.Memory != nil && run.Status.Runners.Memory.Trend != nil:
			tr := run.Status.Runners.Memory.Trend
			c.Note = "runner memory trend (the load generator's own, not the target's): " + tr.Verdict + ". " + tr.Message
			// A runner's warm-up is counted from its own start; the fit took the chart's last
			// Samples points up to fitEnd, which are the same points.
			if tr.FitEnd != nil && tr.Samples > 0 {
				last := -1
				for j, x := range c.X {
					if x <= unixSeconds(tr.FitEnd.Time) {
						last = j
					}
				}
				if first := last - int(tr.Samples) + 1; last >= 0 && first >= 0 {
					drawTrend(c, tr, c.X[first])
				}
			}
		}
	}
	return charts
}

// drawTrend adds tr's fitted line to c from x = from to its fitEnd.
func drawTrend(c *Chart, tr *v1alpha1.MemoryTrend, from float64) {
	slope, err1 := strconv.ParseFloat(tr.SlopeMiBPerHour, 64)
	end, err2 := strconv.ParseFloat(tr.FitEndMiB, 64)
	if err1 != nil || err2 != nil || tr.FitEnd == nil {
		return
	}
	to := unixSeconds(tr.FitEnd.Time)
	line := Series{Label: "trend (" + tr.Verdict + ", " + tr.SlopeMiBPerHour + " MiB/h)", Color: 1, Dash: true}
	if tr.Verdict != "leak" {
		line.Color = 2
	}
	for _, x := range c.X {
		v := Gap
		if x >= from && x <= to {
			v = Value(end + slope*(x-to)/3600)
		}
		line.Values = append(line.Values, v)
	}
	c.Series = append(c.Series, line)
}

// runnerMemoryChartName names the chart of a runner's own memory.
const runnerMemoryChartName = "runner-memory"

// runnerMemoryChart is the memory of the runner status.runners.memory.trend is of (the
// timeline keeps that one runner's points); none without them.
func runnerMemoryChart(tl *judge.Timeline) Chart {
	rm := tl.RunnerMemory
	if rm == nil || len(rm.Points) == 0 {
		return Chart{}
	}
	c := Chart{Name: runnerMemoryChartName, Title: fmt.Sprintf("Runner memory (%s, the load generator's own)", rm.Runner),
		Kind: KindTime, XLabel: "time (UTC)", YLabel: "RSS MiB"}
	s := Series{Label: "runner " + rm.Runner + " RSS MiB", Color: 4}
	for _, p := range rm.Points {
		c.X = append(c.X, unixSeconds(p.At))
		s.Values = append(s.Values, Value(p.MiB))
	}
	c.Series = []Series{s}
	if !tl.LoadStart.IsZero() {
		c.Marks = append(c.Marks, Mark{X: unixSeconds(tl.LoadStart), Label: "load start"})
	}
	if !tl.LoadEnd.IsZero() {
		c.Marks = append(c.Marks, Mark{X: unixSeconds(tl.LoadEnd), Label: "load end"})
	}
	return c
}
