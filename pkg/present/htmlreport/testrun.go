package htmlreport

import (
	"fmt"
	"math"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// GeneratorBoundUtilization is the runner CPU utilization above which the report flags a runner
// as the limit of the run.
const GeneratorBoundUtilization = 0.9

// TestRunCharts are the charts of a run over time, in page order; a chart without data is left
// out (no target samples, no latency histogram).
func TestRunCharts(tl *judge.Timeline) []Chart {
	if tl == nil {
		return nil
	}
	var out []Chart
	for _, c := range []Chart{throughputChart(tl), latencyChart(tl), errorsChart(tl), targetChart(tl), runnerMemoryChart(tl), histogramChart(tl)} {
		if c.Name != "" && hasPoints(c) {
			out = append(out, c)
		}
	}
	return out
}

func windowChart(tl *judge.Timeline, name, title, yLabel string) Chart {
	c := Chart{Name: name, Title: title, Kind: KindTime, XLabel: "time (UTC)", YLabel: yLabel}
	for _, w := range tl.Windows {
		c.X = append(c.X, unixSeconds(w.Start))
	}
	return c
}

func windowSeries(tl *judge.Timeline, label string, color int, fn func(w judge.TimelineWindow) Value) Series {
	s := Series{Label: label, Color: color, Values: make([]Value, 0, len(tl.Windows))}
	for _, w := range tl.Windows {
		s.Values = append(s.Values, fn(w))
	}
	return s
}

// throughputChart draws req/s against the VUs in use and the VUs allocated: an arrival-rate
// scenario allocates its VUs up front and k6 counts one in use only inside an iteration, so
// against a fast target the VUs in use stay near 0 while the allocated ones show the fleet.
func throughputChart(tl *judge.Timeline) Chart {
	c := windowChart(tl, "throughput", "Throughput and VUs", "requests / s")
	c.Y2Label = "VUs"
	c.Series = []Series{
		windowSeries(tl, "req/s", 0, func(w judge.TimelineWindow) Value { return Value(w.RequestsPerSecond) }),
		windowSeries(tl, "VUs in use", 2, func(w judge.TimelineWindow) Value { return Value(w.VUs) }),
		windowSeries(tl, "VUs allocated", 4, func(w judge.TimelineWindow) Value { return Value(w.VUsMax) }),
	}
	// Dashed: the allocated VUs are a reserve, not a load, and a flat line at the top of the
	// right axis would hide a steady req/s at the top of the left one.
	c.Series[1].Right, c.Series[2].Right, c.Series[2].Dash = true, true, true
	return c
}

func latencyChart(tl *judge.Timeline) Chart {
	c := windowChart(tl, "latency", "Request latency per window", "ms")
	q := func(f func(w judge.TimelineWindow) float64) func(w judge.TimelineWindow) Value {
		return func(w judge.TimelineWindow) Value {
			if w.Requests == 0 {
				return Gap
			}
			return Value(f(w))
		}
	}
	c.Series = []Series{
		windowSeries(tl, "p50", 0, q(func(w judge.TimelineWindow) float64 { return w.P50 })),
		windowSeries(tl, "p95", 3, q(func(w judge.TimelineWindow) float64 { return w.P95 })),
		windowSeries(tl, "p99", 1, q(func(w judge.TimelineWindow) float64 { return w.P99 })),
	}
	return c
}

func errorsChart(tl *judge.Timeline) Chart {
	c := windowChart(tl, "errors", "Failed requests and dropped iterations",
		fmt.Sprintf("count per %s window", time.Duration(tl.WindowSeconds*float64(time.Second))))
	c.Series = []Series{
		windowSeries(tl, "failed requests", 1, func(w judge.TimelineWindow) Value { return Value(w.Failed) }),
		windowSeries(tl, "dropped iterations", 3, func(w judge.TimelineWindow) Value { return Value(w.DroppedIterations) }),
	}
	return c
}

func targetChart(tl *judge.Timeline) Chart {
	if len(tl.Target) == 0 {
		return Chart{}
	}
	mem := "memory MiB"
	if tl.TargetMemory != "" {
		mem = tl.TargetMemory + " MiB"
	}
	restarts := tl.Target[len(tl.Target)-1].Restarts
	c := Chart{Name: "target", Title: fmt.Sprintf("Target memory and CPU (restarts: %d)", restarts), Kind: KindTime,
		XLabel: "time (UTC)", YLabel: mem, Y2Label: "CPU cores"}
	memory := Series{Label: mem, Color: 4}
	cores := Series{Label: "CPU cores", Color: 5, Right: true}
	prev := int32(0)
	for i, p := range tl.Target {
		c.X = append(c.X, unixSeconds(p.At))
		memory.Values = append(memory.Values, Value(p.MemoryMiB))
		cpu := Value(p.Cores)
		if i == 0 {
			cpu = Gap // a rate since the previous point: the first has none
		}
		cores.Values = append(cores.Values, cpu)
		if p.Restarts > prev {
			c.Marks = append(c.Marks, Mark{X: unixSeconds(p.At), Label: fmt.Sprintf("restarts: %d", p.Restarts), Alert: true})
		}
		prev = p.Restarts
	}
	c.Series = []Series{memory, cores}
	if !tl.LoadStart.IsZero() {
		c.Marks = append(c.Marks, Mark{X: unixSeconds(tl.LoadStart), Label: "load start"})
	}
	if !tl.LoadEnd.IsZero() {
		c.Marks = append(c.Marks, Mark{X: unixSeconds(tl.LoadEnd), Label: "load end"})
	}
	return c
}

func histogramChart(tl *judge.Timeline) Chart {
	c := Chart{Name: "latency-histogram", Title: "Latency distribution", Kind: KindBars,
		XLabel: "request duration, ms (bucket upper bound, log scale)", YLabel: "requests"}
	s := Series{Label: "requests", Color: 0}
	for _, b := range tl.Latency {
		if b.To <= 0 {
			continue
		}
		c.X = append(c.X, b.To)
		s.Values = append(s.Values, Value(b.Count))
	}
	c.Series = []Series{s}
	return c
}

// runnerRow is one runner line of the report.
type runnerRow struct {
	judge.RunnerRow
	Bound bool
}

func runnerRows(tl *judge.Timeline) []runnerRow {
	if tl == nil {
		return nil
	}
	out := make([]runnerRow, 0, len(tl.Runners))
	for _, r := range tl.Runners {
		out = append(out, runnerRow{RunnerRow: r, Bound: r.CPUUtilization > GeneratorBoundUtilization})
	}
	return out
}

// checkRows are the status' checks, or the summary's when the status lists none by name.
func checkRows(r *v1alpha1.Results, s *judge.K6Summary) []v1alpha1.NamedCheck {
	if r != nil && r.Checks != nil && len(r.Checks.ByName) > 0 {
		return r.Checks.ByName
	}
	if s == nil {
		return nil
	}
	var out []v1alpha1.NamedCheck
	var walk func(g judge.K6Group)
	walk = func(g judge.K6Group) {
		for _, c := range g.Checks {
			out = append(out, v1alpha1.NamedCheck{Name: c.Name, Group: g.Path, Passed: int64(c.Passes), Failed: int64(c.Fails)})
		}
		for _, sub := range g.Groups {
			walk(sub)
		}
	}
	walk(s.RootGroup)
	return out
}

// percent renders a 0..1 share.
func percent(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*f)
}
