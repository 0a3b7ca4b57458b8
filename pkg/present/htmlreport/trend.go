package htmlreport

import (
	"strconv"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// withTrend draws status.target.memory.trend on the target chart: the fitted line from the end
// of the warm-up to the last sample fitted, dashed, labelled with the verdict and slope, and
// the trend's message as the chart's note. Without a fitted line (insufficient) only the note.
func withTrend(charts []Chart, run *v1alpha1.TestRun) []Chart {
	t := run.Status.Target
	if t == nil || t.Memory == nil || t.Memory.Trend == nil {
		return charts
	}
	tr := t.Memory.Trend
	for i := range charts {
		c := &charts[i]
		if c.Name != "target" {
			continue
		}
		c.Note = "memory trend: " + tr.Verdict + ". " + tr.Message
		slope, err1 := strconv.ParseFloat(tr.SlopeMiBPerHour, 64)
		end, err2 := strconv.ParseFloat(tr.FitEndMiB, 64)
		if err1 != nil || err2 != nil || tr.FitEnd == nil || run.Status.StartTime == nil {
			return charts
		}
		from := unixSeconds(run.Status.StartTime.Add(time.Duration(tr.WarmUpSeconds) * time.Second))
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
	return charts
}
