package judge

import (
	"testing"
	"time"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestResultsListTheRunsSlowestRequests: status holds the first ten of the merged run's slowest
// requests, slowest first, with their start and trace id.
func TestResultsListTheRunsSlowestRequests(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	s := &measure.Summary{Complete: true}
	for i := range 12 {
		s.SlowestOfRun = append(s.SlowestOfRun, measure.SlowRequest{DurationMillis: float64(2000 - i*100),
			StartUnixNano: start.Add(time.Duration(i) * time.Second).UnixNano(), Name: "orders", Method: "GET",
			Status: "200", Runner: "run-1-abc", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"})
	}
	r := tabulate(s, 1)
	if len(r.SlowestRequests) != maxSlowest {
		t.Fatalf("%d slowest requests", len(r.SlowestRequests))
	}
	first, last := r.SlowestRequests[0], r.SlowestRequests[maxSlowest-1]
	if first.Duration != "2.00s" || !first.Start.Time.Equal(start) || first.Runner != "run-1-abc" ||
		first.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || last.Duration != "1.10s" {
		t.Errorf("first %+v, last %+v", first, last)
	}
	if r := tabulate(&measure.Summary{}, 1); r.SlowestRequests != nil {
		t.Errorf("slowest requests of a run without them: %+v", r.SlowestRequests)
	}
}
