package htmlreport

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// rowMetric is one number a plan chart draws from each table row.
type rowMetric struct {
	label string
	right bool
	get   func(r v1alpha1.CapacityRow) Value
}

// sweepAxis is how a plan's rows spread over a chart: x from the first numeric sweep dimension
// (Dim), one series per group (profile and the other dimensions' values); with no numeric
// dimension, one x position per group (categories) and a series per repetition.
type sweepAxis struct {
	Dim     string
	Others  []string
	profile []string
}

// DimensionNames are the plan's sweep dimensions in the spec's order, then any other name the
// rows carry.
func DimensionNames(p *v1alpha1.CapacityPlan) []string {
	var names []string
	for _, d := range p.Spec.Sweep {
		names = append(names, d.Name())
	}
	var extra []string
	for _, r := range p.Status.Table {
		for k := range r.Values {
			if !slices.Contains(names, k) && !slices.Contains(extra, k) {
				extra = append(extra, k)
			}
		}
	}
	sort.Strings(extra)
	return append(names, extra...)
}

func newSweepAxis(p *v1alpha1.CapacityPlan) sweepAxis {
	a := sweepAxis{profile: p.Spec.Profiles}
	for _, name := range DimensionNames(p) {
		numeric, seen := true, false
		for _, r := range p.Status.Table {
			if v, ok := r.Values[name]; ok {
				seen = true
				if _, ok := parseNumber(v); !ok {
					numeric = false
				}
			}
		}
		if a.Dim == "" && seen && numeric {
			a.Dim = name
		} else {
			a.Others = append(a.Others, name)
		}
	}
	return a
}

// group names a row's series: its profile and the other dimensions' values.
func (a sweepAxis) group(r v1alpha1.CapacityRow) string {
	parts := []string{r.Profile}
	for _, o := range a.Others {
		if v, ok := r.Values[o]; ok {
			parts = append(parts, o+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func (a sweepAxis) xLabel() string {
	if a.Dim == "" {
		return "profile and sweep values"
	}
	return a.Dim
}

// ordinal names a repetition as seed 001 does: 1st run, 2nd run.
func ordinal(n int32) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(int(n)) + suffix + " run"
}

// sweepChart draws metrics of the plan's rows against the sweep axis.
func sweepChart(p *v1alpha1.CapacityPlan, a sweepAxis, c Chart, metrics []rowMetric) Chart {
	rows := p.Status.Table
	reps := map[int32]bool{}
	var groups []string
	for _, r := range rows {
		reps[max(r.Repetition, 1)] = true
		if g := a.group(r); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return a.profileIndex(groups[i]) < a.profileIndex(groups[j]) })
	repList := make([]int32, 0, len(reps))
	for r := range reps {
		repList = append(repList, r)
	}
	slices.Sort(repList)

	xOf, seriesGroups := a.place(&c, rows, groups, groups)
	for gi, g := range seriesGroups {
		for _, rep := range repList {
			for mi, m := range metrics {
				var label []string
				if g != "" {
					label = append(label, g)
				}
				if len(repList) > 1 {
					label = append(label, ordinal(rep))
				}
				if len(metrics) > 1 || len(label) == 0 {
					label = append(label, m.label)
				}
				s := Series{Label: strings.Join(label, " · "), Right: m.right, Color: gi*len(metrics) + mi, Dash: rep > 1,
					Values: make([]Value, len(c.X))}
				for i := range s.Values {
					s.Values[i] = Gap
				}
				for _, r := range rows {
					if max(r.Repetition, 1) != rep || (g != "" && a.group(r) != g) {
						continue
					}
					if i := slices.Index(c.X, xOf(r)); i >= 0 {
						s.Values[i] = m.get(r)
					}
				}
				c.Series = append(c.Series, s)
			}
		}
	}
	c.Series = dropEmptySeries(c.Series)
	return c
}

// place sets the chart's x axis from the rows: the numeric dimension's values (on a log axis
// when they span two decades or more: seed 004's 64 B to 64 KiB would crowd the small ones
// together), or one category per group. It returns where a row goes and the groups that get
// series: drawn, or one unnamed group on a category axis, whose x positions are the groups.
func (a sweepAxis) place(c *Chart, rows []v1alpha1.CapacityRow, groups, drawn []string) (func(v1alpha1.CapacityRow) float64, []string) {
	c.XLabel = a.xLabel()
	if a.Dim == "" {
		c.Kind, c.XNames = KindCategory, groups
		for i := range groups {
			c.X = append(c.X, float64(i))
		}
		return func(r v1alpha1.CapacityRow) float64 { return float64(slices.Index(groups, a.group(r))) }, []string{""}
	}
	xOf := func(r v1alpha1.CapacityRow) float64 { f, _ := parseNumber(r.Values[a.Dim]); return f }
	for _, r := range rows {
		if x := xOf(r); !slices.Contains(c.X, x) {
			c.X = append(c.X, x)
		}
	}
	slices.Sort(c.X)
	c.LogX = len(c.X) > 1 && c.X[0] > 0 && c.X[len(c.X)-1]/c.X[0] >= 100
	return xOf, drawn
}

func (a sweepAxis) profileIndex(group string) int {
	name, _, _ := strings.Cut(group, " ")
	if i := slices.IndexFunc(a.profile, func(p string) bool { return strings.EqualFold(p, name) }); i >= 0 {
		return i
	}
	return len(a.profile)
}

func latencyOf(get func(l *v1alpha1.Latency) string) func(r v1alpha1.CapacityRow) Value {
	return func(r v1alpha1.CapacityRow) Value {
		if r.Latency == nil {
			return Gap
		}
		return millisOr(get(r.Latency))
	}
}

// PlanCharts are a plan's charts in page order; a chart whose numbers the plan does not have is
// left out.
func PlanCharts(p *v1alpha1.CapacityPlan, children []v1alpha1.TestRun) []Chart {
	a := newSweepAxis(p)
	by := ""
	if a.Dim != "" {
		by = " by " + a.Dim
	}
	pushes := slices.ContainsFunc(p.Status.Table, func(r v1alpha1.CapacityRow) bool { return r.PushesPerSecond != "" })
	tp := rowMetric{label: "req/s", get: func(r v1alpha1.CapacityRow) Value { return numberOr(r.RequestsPerSecond) }}
	title := "Requests per second" + by
	if pushes {
		tp = rowMetric{label: "pushes/s", get: func(r v1alpha1.CapacityRow) Value { return numberOr(r.PushesPerSecond) }}
		title = "Pushes per second" + by
	}
	charts := []Chart{
		bandedChart(p, a, Chart{Name: "plan-throughput", Title: title, Kind: KindLine, YLabel: tp.label}, []rowMetric{tp}, 0),
		planLatencyChart(p, a, Chart{Name: "plan-latency", Title: "Latency" + by, Kind: KindLine, YLabel: "ms"}),
	}
	if roundTrip(p.Status.Table) {
		charts = append(charts, sweepChart(p, a, Chart{Name: "plan-rtt-goodput", Title: "Round-trip time and goodput" + by,
			Kind: KindLine, YLabel: "RTT (avg latency), ms", Y2Label: "goodput, Mb/s received"}, []rowMetric{
			{label: "RTT ms", get: latencyOf(func(l *v1alpha1.Latency) string { return l.Avg })},
			{label: "goodput Mb/s", right: true, get: func(r v1alpha1.CapacityRow) Value { return numberOr(r.ReceivedMbps) }},
		}))
	}
	for i := range children {
		if c := PeakChart("peak-"+children[i].Name, &children[i]); c.Name != "" {
			charts = append(charts, c)
		}
	}
	out := charts[:0]
	for _, c := range charts {
		if hasPoints(c) {
			out = append(out, c)
		}
	}
	return out
}

// PeakChart draws a peak test's climb: throughput and p95 per step against the devices, with
// the breaking point marked; empty when the run has no steps.
func PeakChart(name string, run *v1alpha1.TestRun) Chart {
	pk := run.Status.Peak
	if pk == nil || len(pk.Steps) == 0 {
		return Chart{}
	}
	title := "Peak climb: " + run.Name
	if run.Spec.Profile != "" {
		title += " on " + run.Spec.Profile
	}
	c := Chart{Name: name, Title: title, Kind: KindLine, XLabel: "devices", YLabel: "requests / s", Y2Label: "p95 ms, errors %"}
	rps := Series{Label: "req/s", Color: 0}
	p95 := Series{Label: "p95 ms", Color: 3, Right: true}
	errs := Series{Label: "errors %", Color: 1, Right: true, Dash: true}
	for _, s := range pk.Steps {
		c.X = append(c.X, float64(s.Devices))
		rps.Values = append(rps.Values, numberOr(s.RequestsPerSecond))
		p95.Values = append(p95.Values, millisOr(s.P95))
		errs.Values = append(errs.Values, numberOr(s.ErrorPercent))
	}
	c.Series = dropEmptySeries([]Series{rps, p95, errs})
	if pk.LastHeldDevices > 0 && pk.BreakingPoint == v1alpha1.PeakReached {
		c.Marks = append(c.Marks, Mark{X: float64(pk.LastHeldDevices), Label: fmt.Sprintf("breaking point: %d devices", pk.LastHeldDevices)})
	}
	if pk.FirstFailedDevices > 0 {
		label := "failed"
		if pk.StopRule != "" {
			label += ": " + pk.StopRule
		}
		c.Marks = append(c.Marks, Mark{X: float64(pk.FirstFailedDevices), Label: label, Alert: true})
	}
	return c
}
