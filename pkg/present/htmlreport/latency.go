package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/sizing"
)

// maxLegend is how many series a plan chart's legend may hold before it stops being read: a
// line per row (2 profiles × 2 runs × avg, p95, p99 made 12) is a wall of colours.
const maxLegend = 6

// Band is the range a series' repetitions spanned at each x, drawn as a shaded area around
// that series (report.js); Series indexes Chart.Series.
type Band struct {
	Series int     `json:"series"`
	Low    []Value `json:"low"`
	High   []Value `json:"high"`
}

// planLatencyChart draws a plan's latency with one line per cell group and quantile: the median
// of the repetitions, their min–max as a band. When groups × quantiles would pass maxLegend,
// p95 alone is drawn, and past maxLegend groups the rest are left to the table.
func planLatencyChart(p *v1alpha1.CapacityPlan, a sweepAxis, c Chart) Chart {
	return bandedChart(p, a, c, []rowMetric{
		{label: "avg", get: latencyOf(func(l *v1alpha1.Latency) string { return l.Avg })},
		{label: "p95", get: latencyOf(func(l *v1alpha1.Latency) string { return l.P95 })},
		{label: "p99", get: latencyOf(func(l *v1alpha1.Latency) string { return l.P99 })},
	}, 1)
}

// bandedChart draws metrics of a plan's rows with one line per cell group and metric: the
// median of the repetitions, their min–max as a band, so repetitions never multiply the
// legend. When groups × metrics would pass maxLegend, only metrics[keep] is drawn.
func bandedChart(p *v1alpha1.CapacityPlan, a sweepAxis, c Chart, metrics []rowMetric, keep int) Chart {
	rows := p.Status.Table
	var groups []string
	for _, r := range rows {
		if g := a.group(r); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return a.profileIndex(groups[i]) < a.profileIndex(groups[j]) })
	all := len(metrics)
	// Without a numeric dimension each group is an x position, so the series are the metrics.
	perGroup := a.Dim != ""
	if perGroup && len(groups)*len(metrics) > maxLegend {
		metrics = metrics[keep : keep+1]
	}
	var notes []string
	drawn := groups
	if perGroup && len(groups) > maxLegend {
		drawn = groups[:maxLegend]
		notes = append(notes, fmt.Sprintf("… %d more groups in the table below", len(groups)-maxLegend))
	}

	xOf, seriesGroups := a.place(&c, rows, groups, drawn)
	reps := false
	for gi, g := range seriesGroups {
		for mi, m := range metrics {
			var label []string
			if g != "" {
				label = append(label, g)
			}
			if all > 1 || g == "" {
				label = append(label, m.label)
			}
			s := Series{Label: strings.Join(label, " · "), Color: gi*len(metrics) + mi, Values: make([]Value, len(c.X))}
			b := Band{Low: make([]Value, len(c.X)), High: make([]Value, len(c.X))}
			for i := range c.X {
				var vs []float64
				for _, r := range rows {
					if (g == "" || a.group(r) == g) && xOf(r) == c.X[i] {
						if v := float64(m.get(r)); !math.IsNaN(v) {
							vs = append(vs, v)
						}
					}
				}
				s.Values[i], b.Low[i], b.High[i] = Gap, Gap, Gap
				if len(vs) > 0 {
					// The same median and min–max the plan's summary gives its ranges.
					sp := sizing.SpreadOf(vs)
					s.Values[i] = Value(sp.Median)
					b.Low[i], b.High[i] = Value(slices.Min(vs)), Value(slices.Max(vs))
					reps = reps || len(vs) > 1
				}
			}
			if s.Points() == 0 {
				continue
			}
			b.Series = len(c.Series)
			c.Series = append(c.Series, s)
			c.Bands = append(c.Bands, b)
		}
	}
	if reps {
		notes = append([]string{"lines: the median of each cell's repetitions; shaded: their min–max"}, notes...)
	} else {
		c.Bands = nil
	}
	if len(metrics) == 1 && all > 1 {
		notes = append(notes, metrics[0].label+" only, to keep the legend readable; the others are in the table")
	}
	c.Note = strings.Join(notes, "; ")
	return c
}

// roundTrip says whether the rows' goodput means something: the bytes each response carries
// (received bits per request) change along the sweep by 4× or more, as when the payload is
// swept and echoed (seed 004: 64 B to 64 KiB, 1,024×). On a push benchmark the answers are
// alike, so goodput is the throughput times a constant and its chart only repeats the
// throughput chart; TLS rows beside plain ones receive about twice the bytes per push (the
// handshake, shared by a connection's pushes), which is not a payload sweep.
func roundTrip(rows []v1alpha1.CapacityRow) bool {
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		mbps, ok1 := parseNumber(r.ReceivedMbps)
		rps, ok2 := parseNumber(r.RequestsPerSecond)
		if !ok1 || !ok2 || rps <= 0 || mbps <= 0 {
			continue
		}
		per := mbps / rps
		lo, hi = min(lo, per), max(hi, per)
	}
	return hi > 0 && hi >= 4*lo
}
