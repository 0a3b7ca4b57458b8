package runners

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge"
)

// Load is what a fleet must carry, from spec.load: an arrival rate (devices over period; a
// peak test's highest step) or, for a fixed amount of work per device, the devices as VUs.
type Load struct {
	IterationsPerSecond float64
	VUs                 int64
	// Devices bounds the runners worth having: a runner with no device of its own idles.
	Devices int64
}

// LoadOf reads the load from the device model; ok is false without one.
func LoadOf(spec *v1alpha1.TestRunSpec) (Load, bool, error) {
	if spec.Load == nil || spec.Load.Devices == nil {
		return Load{}, false, nil
	}
	devices := int64(*spec.Load.Devices)
	if spec.Type != v1alpha1.TestTypePeak && spec.Load.Iterations != nil {
		return Load{VUs: devices, Devices: devices}, true, nil // per-vu-iterations (LoadConfig)
	}
	period, err := time.ParseDuration(string(spec.Load.Period))
	if err != nil || period <= 0 {
		return Load{}, false, fmt.Errorf("spec.load.period %q: a device model needs a positive period", spec.Load.Period)
	}
	if spec.Type == v1alpha1.TestTypePeak {
		steps, err := PeakSteps(spec)
		if err != nil {
			return Load{}, false, err
		}
		devices = steps[len(steps)-1].Devices
	}
	return Load{IterationsPerSecond: float64(devices) / period.Seconds(), Devices: devices}, true, nil
}

// RunnerCores is the CPU one runner may use: its limit, else its request; 0 when spec.runner
// sets neither (the runner may then use any share of its node, which cannot be planned on).
func RunnerCores(spec *v1alpha1.TestRunSpec) float64 {
	if spec.Runner == nil || spec.Runner.Resources == nil {
		return 0
	}
	for _, l := range []corev1.ResourceList{spec.Runner.Resources.Limits, spec.Runner.Resources.Requests} {
		if q, ok := l[corev1.ResourceCPU]; ok && q.MilliValue() > 0 {
			return float64(q.MilliValue()) / 1000
		}
	}
	return 0
}

// Capacity is what one runner carries: given per runner (spec.runnerCapacity), or measured
// per CPU core by an earlier run (a CapacityRecord). Zero values are unknown.
type Capacity struct {
	GivenIterationsPerSecond float64
	GivenVUs                 float64
	// Measured is the kept record; nil when none was found or it could not be read.
	Measured *CapacityRecord
}

// CapacityOf is the given capacity of spec.runnerCapacity with the measured record.
func CapacityOf(spec *v1alpha1.TestRunSpec, measured *CapacityRecord) Capacity {
	c := Capacity{Measured: measured}
	if g := spec.RunnerCapacity; g != nil {
		if g.IterationsPerSecond != nil {
			c.GivenIterationsPerSecond = float64(*g.IterationsPerSecond)
		}
		if g.VUs != nil {
			c.GivenVUs = float64(*g.VUs)
		}
	}
	return c
}

// assumedCores is what a runner with no CPU limit or request is planned with: one core, so a
// fleet errs towards more runners.
const assumedCores = 1.0

// MaxParallelismOf is the most runners spec allows: 100 with spec.separate, else 5000.
func MaxParallelismOf(spec *v1alpha1.TestRunSpec) int {
	if spec.Separate {
		return v1alpha1.MaxSeparateParallelism
	}
	return v1alpha1.MaxParallelism
}

// ChooseParallelism is the runner count of parallelism auto, with its source (a
// v1alpha1.Parallelism* constant) and a reason that shows the arithmetic. A given capacity is
// used as given; a measured one (per CPU-second of runner time) is planned at
// judge.PlannedCPUUtilization of the runner's cores. With neither it is one runner, which the
// run itself then measures. The count is at least 1 and at most maxN and the devices.
func ChooseParallelism(load Load, cores float64, c Capacity, maxN int) (n int, source, reason string) {
	vuModel := load.VUs > 0
	unit, demand := "iterations/s", load.IterationsPerSecond
	if vuModel {
		unit, demand = "VUs", float64(load.VUs)
	}
	var perRunner float64
	switch {
	case vuModel && c.GivenVUs > 0:
		perRunner, source = c.GivenVUs, v1alpha1.ParallelismFromGiven
		reason = fmt.Sprintf("%s %s at %s per runner (spec.runnerCapacity.vus)", num(demand), unit, num(perRunner))
	case !vuModel && c.GivenIterationsPerSecond > 0:
		perRunner, source = c.GivenIterationsPerSecond, v1alpha1.ParallelismFromGiven
		reason = fmt.Sprintf("%s %s at %s per runner (spec.runnerCapacity.iterationsPerSecond)", num(demand), unit, num(perRunner))
	case c.Measured != nil && c.Measured.perCore(vuModel) > 0:
		perCore := c.Measured.perCore(vuModel)
		coresNote := fmt.Sprintf("%s cores", num(cores))
		if cores <= 0 {
			cores, coresNote = assumedCores, "1 core assumed (spec.runner.resources sets no CPU)"
		}
		perRunner, source = perCore*cores*judge.PlannedCPUUtilization, v1alpha1.ParallelismFromCalibration
		reason = fmt.Sprintf("%s %s at %s per runner: %s per core measured by %s, %s, planned at %.0f%% CPU",
			num(demand), unit, num(perRunner), num(perCore), c.Measured.Run, coresNote, 100*judge.PlannedCPUUtilization)
	default:
		return 1, v1alpha1.ParallelismUncalibrated, fmt.Sprintf("1 runner: %s %s and no runner capacity known for this script in this namespace (spec.runnerCapacity, or an earlier finished run); this run measures it for the next", num(demand), unit)
	}
	want := math.Ceil(demand / perRunner)
	n = maxN
	if want < float64(maxN) {
		n = max(int(want), 1)
	}
	if load.Devices > 0 && int64(n) > load.Devices {
		n = int(load.Devices)
		reason += fmt.Sprintf("; %d devices, one runner each at most", load.Devices)
	} else if want > float64(maxN) {
		reason += fmt.Sprintf("; %s runners wanted, %d is the most a run has", num(want), maxN)
	}
	noun := "runners"
	if n == 1 {
		noun = "runner"
	}
	return n, source, fmt.Sprintf("%d %s: %s", n, noun, reason)
}

// num prints a figure for a reason: whole numbers bare, others with two decimals.
func num(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.2f", f)
}
