package runners

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// defaultPeakSteps bounds a peak test without maxDevices: the climb must end by itself.
const defaultPeakSteps = 10

// LoadConfig renders spec.load as a k6 JSON config file (passed with --config). Options a
// script exports take precedence over this file, so a script with its own scenarios runs
// unchanged; a script that only exports a default function is driven by the device model.
// Every runner gets the same config: k6 scales rates, VUs and iterations by each runner's
// execution segment. It returns nil when spec.load is absent.
func LoadConfig(spec *v1alpha1.TestRunSpec, testRun string) ([]byte, error) {
	if spec.Load == nil {
		return nil, nil
	}
	load := spec.Load
	cfg := map[string]any{"tags": map[string]string{"testrun": testRun}}
	if load.Devices == nil {
		if load.Duration != "" {
			cfg["duration"] = string(load.Duration)
		}
		return json.Marshal(cfg)
	}
	devices := int64(*load.Devices)
	period, err := time.ParseDuration(string(load.Period))
	if err != nil {
		return nil, fmt.Errorf("spec.load.period: %w", err)
	}
	if period <= 0 {
		// Admission refuses it too; a rate over no time would be infinite (FuzzLoadConfig).
		return nil, fmt.Errorf("spec.load.period %q: must be longer than 0", load.Period)
	}
	var scenario map[string]any
	switch {
	case spec.Type == v1alpha1.TestTypePeak:
		scenario, err = peakScenario(spec, devices, period)
		if err != nil {
			return nil, err
		}
	case load.Iterations != nil:
		// A fixed amount of work per device, done as fast as the target allows: the time it
		// takes is the benchmark's result (seed 000's "# of loops").
		scenario = map[string]any{
			"executor":    "per-vu-iterations",
			"vus":         devices,
			"iterations":  *load.Iterations,
			"maxDuration": maxDuration(spec),
		}
	default:
		pre, maxVUs := vus(load, float64(devices)/period.Seconds())
		scenario = map[string]any{
			"executor":        "constant-arrival-rate",
			"rate":            devices,
			"timeUnit":        load.Period,
			"duration":        load.Duration,
			"preAllocatedVUs": pre,
			"maxVUs":          maxVUs,
		}
	}
	if load.RampUp != "" && scenario["executor"] == "constant-arrival-rate" {
		scenario = rampedArrival(scenario, load)
	}
	scenarios := map[string]any{"devices": scenario}
	if warmUp := WarmUp(spec); warmUp != "" {
		// The devices act at their rate for warmUp, then the measured work starts; the runner
		// leaves the warm-up scenario out of its results (K6_FLEETBENCH_EXCLUDE_SCENARIOS).
		pre, maxVUs := vus(load, float64(devices)/period.Seconds())
		scenarios[WarmUpScenario] = map[string]any{
			"executor": "constant-arrival-rate", "rate": devices, "timeUnit": load.Period, "duration": warmUp,
			"preAllocatedVUs": pre, "maxVUs": maxVUs, "gracefulStop": "0s",
		}
		scenario["startTime"] = warmUp
	}
	cfg["scenarios"] = scenarios
	return json.Marshal(cfg)
}

// WarmUpScenario is the k6 scenario a benchmark warms up in; its samples are not counted.
const WarmUpScenario = "warmup"

// WarmUp is a benchmark's warm-up, or "" when it has none.
func WarmUp(spec *v1alpha1.TestRunSpec) v1alpha1.Duration {
	if spec.Type != v1alpha1.TestTypeBenchmark || spec.Benchmark == nil || spec.Load == nil || spec.Load.Devices == nil {
		return ""
	}
	return spec.Benchmark.WarmUp
}

// vus sizes the VU pool of an arrival-rate executor. Too few pre-allocated VUs drop
// iterations (measured here: 50 VUs dropped 29 % at 5000/s, 200 held it), so start from a
// tenth of the per-second rate and let k6 grow to four times that.
func vus(load *v1alpha1.LoadSpec, perSecond float64) (pre, maxVUs int64) {
	pre = int64(math.Ceil(perSecond/10)) + 10
	if load.PreAllocatedVUs != nil {
		pre = int64(*load.PreAllocatedVUs)
	}
	maxVUs = max(pre*4, 100)
	if load.MaxVUs != nil {
		maxVUs = max(int64(*load.MaxVUs), pre)
	}
	return pre, maxVUs
}

// rampedArrival turns a constant rate into a ramp over rampUp followed by the steady rate,
// so devices do not all start in the same second.
func rampedArrival(constant map[string]any, load *v1alpha1.LoadSpec) map[string]any {
	return map[string]any{
		"executor":        "ramping-arrival-rate",
		"startRate":       0,
		"timeUnit":        constant["timeUnit"],
		"preAllocatedVUs": constant["preAllocatedVUs"],
		"maxVUs":          constant["maxVUs"],
		"stages": []map[string]any{
			{"target": constant["rate"], "duration": load.RampUp},
			{"target": constant["rate"], "duration": load.Duration},
		},
	}
}

// peakScenario climbs through PeakSteps: each a near-instant ramp to its level, then a hold.
func peakScenario(spec *v1alpha1.TestRunSpec, devices int64, period time.Duration) (map[string]any, error) {
	steps, err := PeakSteps(spec)
	if err != nil {
		return nil, err
	}
	var stages []map[string]any
	for _, st := range steps {
		stages = append(stages,
			map[string]any{"target": st.Devices, "duration": peakRamp.String()},
			map[string]any{"target": st.Devices, "duration": spec.Peak.StepDuration})
	}
	top := steps[len(steps)-1].Devices
	pre, maxVUs := vus(spec.Load, float64(top)/period.Seconds())
	return map[string]any{
		"executor":        "ramping-arrival-rate",
		"startRate":       devices,
		"timeUnit":        spec.Load.Period,
		"preAllocatedVUs": pre,
		"maxVUs":          maxVUs,
		"stages":          stages,
	}, nil
}

// maxDuration bounds an iteration-count scenario the way k6 requires, from spec.timeouts.run.
func maxDuration(spec *v1alpha1.TestRunSpec) string {
	if spec.Timeouts != nil && spec.Timeouts.Run != "" {
		return string(spec.Timeouts.Run)
	}
	return "1h"
}

// ExpectedDuration is how long the load should take, when the spec says; zero when only the
// script knows (its own options) or the work decides (iterations).
func ExpectedDuration(spec *v1alpha1.TestRunSpec) time.Duration {
	if spec.Load == nil {
		return 0
	}
	parse := func(d v1alpha1.Duration) time.Duration {
		v, _ := time.ParseDuration(string(d))
		return v
	}
	switch {
	case spec.Type == v1alpha1.TestTypePeak:
		steps, err := PeakSteps(spec)
		if err != nil {
			return 0
		}
		return steps[len(steps)-1].To
	case spec.Load.Duration != "":
		return parse(spec.Load.RampUp) + parse(spec.Load.Duration)
	}
	return 0
}
