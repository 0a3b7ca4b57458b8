package runners

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

func TestPeakSteps(t *testing.T) {
	peak := tw.MakeTestRun("p", "ns").Type(v1alpha1.TestTypePeak).Devices(100, "10s").
		Peak(&v1alpha1.PeakSpec{StepDevices: 100, StepDuration: "30s", MaxDevices: ptr.To[int32](350),
			StopWhen: v1alpha1.PeakStopRules{P95Above: "200ms"}}).Obj()
	steps, err := PeakSteps(&peak.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want := []PeakStep{
		{0, 100, time.Second, 31 * time.Second}, {1, 200, 32 * time.Second, 62 * time.Second},
		{2, 300, 63 * time.Second, 93 * time.Second}, {3, 350, 94 * time.Second, 124 * time.Second},
	}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %v, want %v", steps, want)
	}
	if d := ExpectedDuration(&peak.Spec); d != 124*time.Second {
		t.Errorf("expected duration %s, want the last hold's end", d)
	}
	// The k6 stages are the same steps: a one-second ramp, then the hold.
	s := scenarioOf(t, &peak.Spec)
	stages := s["stages"].([]any)
	if len(stages) != 8 || stages[6].(map[string]any)["target"] != 350.0 || stages[7].(map[string]any)["duration"] != "30s" {
		t.Errorf("stages %v", stages)
	}
	// Windows a fifth of the hold, enough that none coarsens before the climb ends.
	env := envOf(Job(peak, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0])
	if env["K6_FLEETBENCH_WINDOW"] != "6s" || env["K6_FLEETBENCH_MAX_WINDOWS"] != "60" || env["K6_FLEETBENCH_LIVE"] != ":6566" {
		t.Errorf("peak runner env %v", env)
	}

	peak.Spec.Peak.StepDevices, peak.Spec.Peak.MaxDevices = 1, ptr.To[int32](1000)
	if _, err := PeakSteps(&peak.Spec); err == nil || !strings.Contains(err.Error(), "more than 200 steps") {
		t.Errorf("a 900-step climb: %v", err)
	}
	if _, err := LoadConfig(&peak.Spec, "p"); err == nil {
		t.Error("the load config accepted a climb of more than 200 steps")
	}
}

func TestBenchmarkWarmUpIsAScenarioNotCounted(t *testing.T) {
	bench := tw.MakeTestRun("b", "ns").Type(v1alpha1.TestTypeBenchmark).Devices(1200, "200s").Iterations(10).
		Benchmark(&v1alpha1.BenchmarkSpec{WarmUp: "30s"}).Obj()
	scenarios := scenariosOf(t, &bench.Spec)
	warm, work := scenarios[WarmUpScenario], scenarios["devices"]
	if warm["executor"] != "constant-arrival-rate" || warm["rate"] != 1200.0 || warm["timeUnit"] != "200s" || warm["duration"] != "30s" {
		t.Errorf("warm-up scenario %v", warm)
	}
	if work["executor"] != "per-vu-iterations" || work["startTime"] != "30s" {
		t.Errorf("measured scenario %v: it starts after the warm-up", work)
	}
	env := envOf(Job(bench, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0])
	if env["K6_FLEETBENCH_EXCLUDE_SCENARIOS"] != WarmUpScenario {
		t.Errorf("runner env %v: the warm-up must not count", env)
	}
	bench.Spec.Benchmark = nil
	if env := envOf(Job(bench, 0, 1, JobOptions{}).Spec.Template.Spec.Containers[0]); env["K6_FLEETBENCH_EXCLUDE_SCENARIOS"] != "" {
		t.Errorf("no warm-up, yet %v", env)
	}
}
