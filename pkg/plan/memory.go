package plan

import (
	"fmt"
	"math"
	"strconv"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// memoryBound is the device count at which the target's memory reaches the profile's at the
// safety margin, and where the memory per device came from.
type memoryBound struct {
	devices int64
	message string
}

// memorySample is one run's memory footprint.
type memorySample struct {
	run                  string
	perDeviceMiB, before float64
	devices              int64
	profileMiB           float64
}

// memoryOf bounds a profile by memory: the footprint of the spec.memoryFrom stability runs on
// it when there are any (the largest per device, to be safe), else that of the plan's own
// passing rows (their median, said to be extrapolated from few devices). Devices fill
// safePercent of the profile's memory from what the target held before the load.
func (in SummaryInput) memoryOf(profile string, safePercent int32) memoryBound {
	var stab []memorySample
	for i := range in.Stability {
		// Only a stability run's footprint stands for a fleet that stays; a short benchmark
		// named here would pass an extrapolation off as a measurement.
		if s, ok := sampleOf(&in.Stability[i]); ok && in.Stability[i].Spec.Type == v1alpha1.TestTypeStability &&
			sameProfile(in.Stability[i].Status.Profile.Name, profile) {
			stab = append(stab, s)
		}
	}
	if len(stab) > 0 {
		worst := stab[0]
		for _, s := range stab[1:] {
			if s.perDeviceMiB > worst.perDeviceMiB {
				worst = s
			}
		}
		return boundFrom(worst, safePercent, fmt.Sprintf("stability run %s, %d devices", worst.run, worst.devices))
	}
	own := in.ownSamples(profile, true)
	if len(own) == 0 {
		if flat := in.ownSamples(profile, false); len(flat) > 0 {
			return memoryBound{message: fmt.Sprintf("memory per device did not grow (%s)", ownRows(len(flat)))}
		}
		return memoryBound{}
	}
	m := medianSample(own)
	b := boundFrom(m, safePercent, ownRows(len(own)))
	if b.devices > 0 && m.devices > 0 {
		b.message += fmt.Sprintf(": extrapolated %.0f× from %d devices; name a stability run in spec.memoryFrom to measure it", float64(b.devices)/float64(m.devices), m.devices)
	}
	return b
}

// sampleOf reads a finished run's memory per device; ok is false without one.
func sampleOf(run *v1alpha1.TestRun) (memorySample, bool) {
	st := &run.Status
	if st.Phase != v1alpha1.PhaseSucceeded || st.Target == nil || st.Target.Memory == nil || st.Profile == nil {
		return memorySample{}, false
	}
	per, err := strconv.ParseFloat(st.Target.Memory.PerDeviceMiB, 64)
	if err != nil || math.IsNaN(per) || math.IsInf(per, 0) { // "NaN" and "Inf" parse, and are no footprint
		return memorySample{}, false
	}
	s := memorySample{run: run.Name, perDeviceMiB: per, before: float64(st.Target.Memory.BeforeMiB),
		profileMiB: float64(st.Profile.Spec.Memory.Value()) / (1 << 20)}
	if l := run.Spec.Load; l != nil && l.Devices != nil {
		s.devices = int64(*l.Devices)
	}
	if p := st.Peak; p != nil && p.LastHeldDevices > 0 {
		s.devices = p.LastHeldDevices
	}
	return s, true
}

func medianSample(xs []memorySample) memorySample {
	per := make([]float64, len(xs))
	before := make([]float64, len(xs))
	devices := make([]float64, len(xs))
	for i, s := range xs {
		per[i], before[i], devices[i] = s.perDeviceMiB, s.before, float64(s.devices)
	}
	return memorySample{perDeviceMiB: medianOf(per), before: medianOf(before), devices: int64(medianOf(devices)), profileMiB: xs[0].profileMiB}
}

// boundFrom: (profile memory × safePercent − memory before the load) / memory per device. A
// footprint that did not grow bounds nothing.
func boundFrom(s memorySample, safePercent int32, source string) memoryBound {
	if s.perDeviceMiB <= 0 || s.profileMiB <= 0 {
		return memoryBound{message: fmt.Sprintf("memory per device did not grow (%s)", source)}
	}
	room := s.profileMiB*float64(safePercent)/100 - s.before
	devices := int64(math.Max(0, math.Floor(room/s.perDeviceMiB)))
	return memoryBound{devices: devices, message: fmt.Sprintf("%.4f MiB per device (%s) fills %d %% of %.0f MiB, from %.0f MiB before the load, at %d devices",
		s.perDeviceMiB, source, safePercent, s.profileMiB, s.before, devices)}
}

func ownRows(n int) string {
	if n == 1 {
		return "this plan's one row"
	}
	return fmt.Sprintf("median of this plan's %d rows", n)
}
