package runners

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// FuzzLoadConfig: whatever load a spec describes (the types, counts and durations admission
// bounds, and strings it would not), the builder returns an error or a k6 config that is JSON
// with only known executors and non-negative numbers; it never panics, nor does the expected
// duration, nor splitting it over 1..1000 runners. (A crash it found is a seed below.)
func FuzzLoadConfig(f *testing.F) {
	f.Add(uint8(0), int32(200), "10s", "1m", int32(0), "", int32(0), int32(0), "", uint16(2))
	f.Add(uint8(1), int32(1000), "1s", "2h", int32(0), "30s", int32(100), int32(2000), "", uint16(8))
	f.Add(uint8(2), int32(50), "5s", "", int32(10), "", int32(0), int32(0), "", uint16(1))
	f.Add(uint8(3), int32(100), "10s", "", int32(0), "", int32(0), int32(0), "20s", uint16(4))
	f.Add(uint8(3), int32(1), "1ms", "", int32(0), "", int32(0), int32(0), "1ms", uint16(1000))
	f.Add(uint8(0), int32(-5), "-1s", "abc", int32(-1), "1h", int32(-3), int32(0), "0s", uint16(0))
	types := []v1alpha1.TestType{v1alpha1.TestTypeLoad, v1alpha1.TestTypeStability, v1alpha1.TestTypeBenchmark, v1alpha1.TestTypePeak}
	executors := map[string]bool{"constant-arrival-rate": true, "ramping-arrival-rate": true, "per-vu-iterations": true,
		"shared-iterations": true, "constant-vus": true, "ramping-vus": true}
	f.Fuzz(func(t *testing.T, typ uint8, devices int32, period, duration string, iterations int32, rampUp string,
		preAllocated, maxVUs int32, stepDuration string, runners uint16) {
		spec := &v1alpha1.TestRunSpec{Type: types[int(typ)%len(types)], Load: &v1alpha1.LoadSpec{
			Devices: ptr.To(devices), Period: v1alpha1.Duration(period), Duration: v1alpha1.Duration(duration), RampUp: v1alpha1.Duration(rampUp),
		}}
		if iterations != 0 {
			spec.Load.Iterations = ptr.To(iterations)
		}
		if preAllocated != 0 {
			spec.Load.PreAllocatedVUs = ptr.To(preAllocated)
		}
		if maxVUs != 0 {
			spec.Load.MaxVUs = ptr.To(maxVUs)
		}
		if spec.Type == v1alpha1.TestTypePeak {
			spec.Peak = &v1alpha1.PeakSpec{StepDevices: devices, StepDuration: v1alpha1.Duration(stepDuration)}
		}
		admitted := devices >= 1 && iterations >= 0 && preAllocated >= 0 && maxVUs >= 0 &&
			admittedDuration(period, false) && admittedDuration(duration, true) && admittedDuration(rampUp, true) && admittedDuration(stepDuration, true)
		_ = ExpectedDuration(spec)
		if n := int(runners%1000) + 1; len(Segments(n)) != n {
			t.Fatalf("Segments(%d) has %d parts", n, len(Segments(n)))
		}
		b, err := LoadConfig(spec, "fuzz")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		var cfg struct {
			Scenarios map[string]map[string]any `json:"scenarios"`
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("config is not JSON: %v\n%s", err, b)
		}
		for name, sc := range cfg.Scenarios {
			if exec, _ := sc["executor"].(string); !executors[exec] {
				t.Fatalf("scenario %s: executor %q\n%s", name, sc["executor"], b)
			}
			for k, v := range sc {
				// Admission keeps counts positive (minimum 1); beyond that only "no panic" holds.
				if n, ok := v.(float64); ok && n < 0 && admitted {
					t.Fatalf("scenario %s: %s = %v is negative\n%s", name, k, n, b)
				}
			}
		}
	})
}

var durationSyntax = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)

// admittedDuration is the CRD's rule for a Duration (v1alpha1.Duration): positive, in k6's form.
func admittedDuration(s string, optional bool) bool {
	if s == "" {
		return optional
	}
	d, err := time.ParseDuration(s)
	return durationSyntax.MatchString(s) && err == nil && d > 0
}
