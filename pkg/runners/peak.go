package runners

import (
	"fmt"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// MaxPeakSteps bounds a climb: every step is a row in status and a stage in k6's scenario.
const MaxPeakSteps = 200

// peakRamp is how long each step takes to reach its level before it holds.
const peakRamp = time.Second

// PeakStep is one level of a peak test. From and To bound its hold, measured from the start of
// the load: the operator judges the step on what the runners measured in [From, To).
type PeakStep struct {
	Index    int
	Devices  int64
	From, To time.Duration
}

// PeakSteps are the levels of a peak test: from spec.load.devices up by stepDevices to
// maxDevices (or ten steps), each a one-second ramp and a hold of stepDuration.
func PeakSteps(spec *v1alpha1.TestRunSpec) ([]PeakStep, error) {
	peak := spec.Peak
	if peak == nil || spec.Load == nil || spec.Load.Devices == nil {
		return nil, fmt.Errorf("a peak test needs spec.peak and spec.load.devices")
	}
	hold, err := time.ParseDuration(string(peak.StepDuration))
	if err != nil || hold <= 0 {
		return nil, fmt.Errorf("spec.peak.stepDuration %q is not a positive duration", peak.StepDuration)
	}
	devices := int64(*spec.Load.Devices)
	top := devices + defaultPeakSteps*int64(peak.StepDevices)
	if peak.MaxDevices != nil {
		top = int64(*peak.MaxDevices)
	}
	var steps []PeakStep
	for level := devices; ; level += int64(peak.StepDevices) {
		level = min(level, top)
		if len(steps) == MaxPeakSteps {
			return nil, fmt.Errorf("the climb from %d to %d devices by %d takes more than %d steps; raise spec.peak.stepDevices or lower spec.peak.maxDevices",
				devices, top, peak.StepDevices, MaxPeakSteps)
		}
		begin := time.Duration(len(steps)) * (peakRamp + hold)
		steps = append(steps, PeakStep{Index: len(steps), Devices: level, From: begin + peakRamp, To: begin + peakRamp + hold})
		if level >= top {
			return steps, nil
		}
	}
}

// PeakWindow is the runners' window width for a peak test: several windows per step, so a
// step's hold is measured by whole windows.
func PeakWindow(spec *v1alpha1.TestRunSpec) time.Duration {
	hold, _ := time.ParseDuration(string(spec.Peak.StepDuration))
	return min(max((hold/5).Truncate(time.Second), time.Second), 10*time.Second)
}
