package provision

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"fleetbench.dev/fleetbench/pkg/runners"
)

// TestCheckScenariosSumTheSegments: the pre-flight's check report gives each segment's share of
// each scenario; the warnings see the scenario's whole VUs, as k6 split them.
func TestCheckScenariosSumTheSegments(t *testing.T) {
	report := `k6 says hello
{"fleetbenchCheck":"passed","totalDuration":"30s","segments":[` +
		`{"segment":"0:1/3","maxVUs":1,"scenarios":[{"name":"load","executor":"constant-arrival-rate","vus":1,"maxVUs":1}]},` +
		`{"segment":"1/3:2/3","maxVUs":1,"scenarios":[{"name":"load","executor":"constant-arrival-rate","vus":1,"maxVUs":1}]},` +
		`{"segment":"2/3:1","maxVUs":0,"scenarios":[{"name":"load","executor":"constant-arrival-rate","vus":0,"maxVUs":0}]}]}`
	got, ok := checkScenarios(report)
	want := []runners.ScenarioVUs{{Name: "load", Executor: "constant-arrival-rate", VUs: 2, MaxVUs: 2}}
	if !ok || !slices.Equal(got, want) {
		t.Fatalf("checkScenarios = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := checkScenarios(`{"fleetbenchCheck":"passed","totalDuration":"30s"}`); ok {
		t.Errorf("a report without segments gave scenarios")
	}
	warnings := runners.ZeroVUWarnings(got, 3, func(i int) string { return fmt.Sprintf("runner-%d", i) })
	if len(warnings) != 1 || !strings.Contains(warnings[0], "runner-2") {
		t.Errorf("warnings %q, want one naming runner-2", warnings)
	}
}
