package judge

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func TestTargetProblems(t *testing.T) {
	spec := &v1alpha1.TestRunSpec{Stability: &v1alpha1.StabilitySpec{
		MaxMemoryGrowthPercent: ptr.To[int32](100),
		LogPatterns:            []v1alpha1.LogPattern{{Name: "error", Regex: "error", FailAbove: ptr.To[int64](0)}, {Name: "warning", Regex: "warn"}},
	}}
	healthy := &v1alpha1.TargetUsage{Memory: &v1alpha1.MemoryUsage{IncreasePercent: "29.55"},
		LogFindings: []v1alpha1.LogFinding{{Pattern: "warning", Count: 2}, {Pattern: "error", Count: 0}}}
	if got := TargetProblems(healthy, spec); len(got) != 0 {
		t.Errorf("seed 000's Stab-2-2 passed, got problems %v", got)
	}
	sick := &v1alpha1.TargetUsage{Restarts: 2, OOMKills: 1, Memory: &v1alpha1.MemoryUsage{IncreasePercent: "322.73"},
		LogFindings: []v1alpha1.LogFinding{{Pattern: "error", Count: 1, Sample: "level=error msg=\"simulated crash\""}}}
	got := strings.Join(TargetProblems(sick, spec), "\n")
	for _, want := range []string{"restarted 2 times (1 OOM kills)", "grew 322.73%", "1 target log lines match error"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
}

func TestCapacityFromBenchmark(t *testing.T) {
	// Seed 000 Bench-6-SSL on C1 with one handler: 125.53 pushes/s every 200 s.
	spec := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeBenchmark, Load: &v1alpha1.LoadSpec{Devices: ptr.To[int32](1200), Period: "200s", Iterations: ptr.To[int32](10)}}
	r := &v1alpha1.Results{Requests: &v1alpha1.RequestCounts{Total: 12000, Accepted: 12000}, Throughput: &v1alpha1.Throughput{RequestsPerSecond: "125.53"}}
	c := Capacity(r, spec, nil)
	if c == nil || c.PushesPerSecond != "125.53" || c.IdealMaxDevices != 25106 || c.SafeMaxDevices != 20085 || c.TypicalMaxDevices != 5021 {
		t.Fatalf("capacity = %+v", c)
	}
	// Half the pushes dropped: only accepted ones count.
	r.Requests.Accepted = 6000
	if c := Capacity(r, spec, nil); c.IdealMaxDevices != 12553 {
		t.Errorf("ideal with half dropped = %d", c.IdealMaxDevices)
	}
	spec.Type = v1alpha1.TestTypeStability
	if c := Capacity(r, spec, nil); c != nil {
		t.Errorf("a stability test measures no sustainable rate, got %+v", c)
	}
}
