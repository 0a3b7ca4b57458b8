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

// TestUncountedPatterns: a failAbove pattern counted on part of the logs is not judged passed;
// above its limit it fails (TargetProblems), and without failAbove it is only reported.
func TestUncountedPatterns(t *testing.T) {
	spec := &v1alpha1.TestRunSpec{Stability: &v1alpha1.StabilitySpec{LogPatterns: []v1alpha1.LogPattern{
		{Name: "error", Regex: "error", FailAbove: ptr.To[int64](2)}, {Name: "warning", Regex: "warn"}, {Name: "crash\x1b", Regex: "crash", FailAbove: ptr.To[int64](0)}}}}
	cut := "counted in the first 1.0 MiB of the 30.0 MiB of target logs read"
	for _, c := range []struct {
		name     string
		findings []v1alpha1.LogFinding
		want     []string
		problems int
	}{
		{"whole counts", []v1alpha1.LogFinding{{Pattern: "error", Count: 2}, {Pattern: "warning", Count: 9}, {Pattern: "crash\x1b"}}, nil, 0},
		{"a cut count within failAbove", []v1alpha1.LogFinding{{Pattern: "error", Count: 1, Incomplete: cut}}, []string{"log pattern error (failAbove 2): 1 lines, " + cut}, 0},
		{"a cut count above failAbove fails", []v1alpha1.LogFinding{{Pattern: "error", Count: 3, Incomplete: cut}}, nil, 1},
		{"a cut count without failAbove", []v1alpha1.LogFinding{{Pattern: "warning", Count: 3, Incomplete: cut}}, nil, 0},
		{"names compare as status shows them", []v1alpha1.LogFinding{{Pattern: `crash\x1b`, Incomplete: "not counted: too large"}},
			[]string{"log pattern crash\x1b (failAbove 0): 0 lines, not counted: too large"}, 0}, // made printable with the status
	} {
		t.Run(c.name, func(t *testing.T) {
			usage := &v1alpha1.TargetUsage{LogFindings: c.findings}
			if got := UncountedPatterns(usage, spec); strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("uncounted = %q, want %q", got, c.want)
			}
			if got := TargetProblems(usage, spec); len(got) != c.problems {
				t.Errorf("problems = %q, want %d", got, c.problems)
			}
		})
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
