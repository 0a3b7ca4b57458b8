package runners

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/pkg/measure"
)

// TestScenariosFromCheckReport: the pre-flight's check report gives each segment's share of
// each scenario; the warnings see the scenario's whole VUs, as k6 split them, and a segment
// with none of them is named.
func TestScenariosFromCheckReport(t *testing.T) {
	report := measure.CheckReport{Check: measure.CheckPassed, Segments: []measure.CheckSegment{
		{Segment: "0:1/3", Scenarios: []measure.CheckScenario{
			{Name: "load", Executor: "constant-arrival-rate", VUs: 1, MaxVUs: 2},
			{Name: "warm", Executor: "constant-vus", VUs: 1, MaxVUs: 1},
		}},
		{Segment: "1/3:2/3", Scenarios: []measure.CheckScenario{
			{Name: "load", Executor: "constant-arrival-rate", VUs: 1, MaxVUs: 2},
			{Name: "warm", Executor: "constant-vus", VUs: 1, MaxVUs: 1},
		}},
		{Segment: "2/3:1", Scenarios: []measure.CheckScenario{
			{Name: "load", Executor: "constant-arrival-rate", VUs: 0, MaxVUs: 2},
			{Name: "warm", Executor: "constant-vus", VUs: 1, MaxVUs: 1},
		}},
	}}
	got, ok := ScenariosFromCheckReport(report)
	want := []ScenarioVUs{
		{Name: "load", Executor: "constant-arrival-rate", VUs: 2, MaxVUs: 6},
		{Name: "warm", Executor: "constant-vus", VUs: 3, MaxVUs: 3},
	}
	if !ok || !slices.Equal(got, want) {
		t.Fatalf("ScenariosFromCheckReport = %+v, %v; want %+v", got, ok, want)
	}
	warnings := ZeroVUWarnings(got, 3, func(i int) string { return fmt.Sprintf("runner-%d", i) })
	if len(warnings) != 1 || !strings.Contains(warnings[0], "runner-2") || !strings.Contains(warnings[0], `"load"`) {
		t.Errorf("warnings %q, want one naming scenario load and runner-2", warnings)
	}
	if _, ok := ScenariosFromCheckReport(measure.CheckReport{Check: measure.CheckPassed, TotalDuration: "30s"}); ok {
		t.Error("a report without segments gave scenarios")
	}
}

// A forged report cannot make the warnings read without bound.
func TestScenariosFromCheckReportIsBounded(t *testing.T) {
	var scenarios []measure.CheckScenario
	for i := range 1000 {
		scenarios = append(scenarios, measure.CheckScenario{Name: fmt.Sprint("s", i), Executor: "constant-vus", VUs: ^uint64(0), MaxVUs: ^uint64(0)})
	}
	got, ok := ScenariosFromCheckReport(measure.CheckReport{Segments: []measure.CheckSegment{{Scenarios: scenarios}, {Scenarios: scenarios}}})
	if !ok || len(got) != maxScenarios {
		t.Fatalf("%d scenarios read, want %d", len(got), maxScenarios)
	}
	for _, s := range got {
		if s.VUs != 2<<40 || s.MaxVUs != 2<<40 {
			t.Fatalf("%+v: the counts are not capped", s)
		}
	}
}
