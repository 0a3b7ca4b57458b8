package runners

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func scenarioOf(t *testing.T, spec *v1alpha1.TestRunSpec) map[string]any {
	t.Helper()
	return scenariosOf(t, spec)["devices"]
}

// scenariosOf is every k6 scenario the load config defines, by name.
func scenariosOf(t *testing.T, spec *v1alpha1.TestRunSpec) map[string]map[string]any {
	t.Helper()
	raw, err := LoadConfig(spec, "tr")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Scenarios map[string]map[string]any `json:"scenarios"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Scenarios
}

func TestLoadConfigFromDeviceModel(t *testing.T) {
	// Seed 000 Stab-2-2: 1000 devices every 200 s for 2 h is 5 requests per second.
	stab := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeStability, Load: &v1alpha1.LoadSpec{Devices: ptr.To[int32](1000), Period: "200s", Duration: "2h"}}
	s := scenarioOf(t, stab)
	if s["executor"] != "constant-arrival-rate" || s["rate"] != 1000.0 || s["timeUnit"] != "200s" || s["duration"] != "2h" {
		t.Errorf("stability scenario = %v", s)
	}
	if s["preAllocatedVUs"].(float64) < 10 || s["maxVUs"].(float64) < s["preAllocatedVUs"].(float64) {
		t.Errorf("VU pool too small: %v", s)
	}

	bench := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypeBenchmark, Load: &v1alpha1.LoadSpec{Devices: ptr.To[int32](1200), Period: "200s", Iterations: ptr.To[int32](10)}}
	s = scenarioOf(t, bench)
	if s["executor"] != "per-vu-iterations" || s["vus"] != 1200.0 || s["iterations"] != 10.0 || s["maxDuration"] != "1h" {
		t.Errorf("benchmark scenario = %v", s)
	}

	peak := &v1alpha1.TestRunSpec{Type: v1alpha1.TestTypePeak, Load: &v1alpha1.LoadSpec{Devices: ptr.To[int32](100), Period: "60s"},
		Peak: &v1alpha1.PeakSpec{StepDevices: 50, StepDuration: "2m", MaxDevices: ptr.To[int32](220)}}
	s = scenarioOf(t, peak)
	stages := s["stages"].([]any)
	var levels []float64
	for i := 0; i < len(stages); i += 2 {
		levels = append(levels, stages[i].(map[string]any)["target"].(float64))
	}
	if want := []float64{100, 150, 200, 220}; len(levels) != len(want) || levels[0] != want[0] || levels[3] != want[3] {
		t.Errorf("peak levels = %v, want %v", levels, want)
	}
	if got, want := ExpectedDuration(peak), 4*(2*time.Minute+time.Second); got != want {
		t.Errorf("peak expected duration = %v, want %v", got, want)
	}

	ramped := &v1alpha1.TestRunSpec{Load: &v1alpha1.LoadSpec{Devices: ptr.To[int32](100), Period: "10s", Duration: "5m", RampUp: "1m"}}
	s = scenarioOf(t, ramped)
	if s["executor"] != "ramping-arrival-rate" || len(s["stages"].([]any)) != 2 {
		t.Errorf("ramped scenario = %v", s)
	}
	if got := ExpectedDuration(ramped); got != 6*time.Minute {
		t.Errorf("ramped expected duration = %v", got)
	}
}

func TestLoadConfigLeavesScriptOptionsAlone(t *testing.T) {
	raw, err := LoadConfig(&v1alpha1.TestRunSpec{}, "tr")
	if err != nil || raw != nil {
		t.Fatalf("no load block must give no config, got %s, %v", raw, err)
	}
	if got := ExpectedDuration(&v1alpha1.TestRunSpec{}); got != 0 {
		t.Fatalf("unknown length must be 0, got %v", got)
	}
}
