package htmlreport

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// ZoneLatencyChart draws a zoned run's latency by zone, side by side: one x position per zone
// (status.zones), its own avg, p50, p95 and p99; empty without zones or their numbers.
func ZoneLatencyChart(run *v1alpha1.TestRun) Chart {
	zones := run.Status.Zones
	if len(zones) == 0 {
		return Chart{}
	}
	c := Chart{Name: "zone-latency", Title: "Latency by zone", Kind: KindCategory, XLabel: "zone (cluster)", YLabel: "ms",
		Note: "Each zone's own requests, merged from its runners; the run's results merge every zone's."}
	quantiles := []struct {
		label string
		get   func(l *v1alpha1.Latency) string
	}{
		{"avg", func(l *v1alpha1.Latency) string { return l.Avg }},
		{"p50", func(l *v1alpha1.Latency) string { return l.P50 }},
		{"p95", func(l *v1alpha1.Latency) string { return l.P95 }},
		{"p99", func(l *v1alpha1.Latency) string { return l.P99 }},
	}
	for i, z := range zones {
		cluster := z.Cluster
		if cluster == "" {
			cluster = "home"
		}
		c.XNames = append(c.XNames, z.Name+" ("+cluster+")")
		c.X = append(c.X, float64(i))
	}
	for qi, q := range quantiles {
		s := Series{Label: q.label, Color: qi, Values: make([]Value, len(zones))}
		for i, z := range zones {
			s.Values[i] = Gap
			if z.Latency != nil {
				s.Values[i] = millisOr(q.get(z.Latency))
			}
		}
		c.Series = append(c.Series, s)
	}
	c.Series = dropEmptySeries(c.Series)
	if !hasPoints(c) {
		return Chart{}
	}
	return c
}
