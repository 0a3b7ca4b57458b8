// Package capacity holds seed 000's formulas: how memory growth, RAM utilization and measured
// push rates turn into device counts a deployment can be sized by.
package capacity

import (
	"fmt"
	"math"
	"time"
)

// MemoryInputs are what a stability test measures of the target.
type MemoryInputs struct {
	// BeforeRSSMiB and AfterRSSMiB are the measured process's resident memory before and after the load.
	BeforeRSSMiB, AfterRSSMiB float64
	// UsedMiB is the memory the whole target used, of TotalMiB (the profile's memory).
	UsedMiB, TotalMiB float64
	// Devices the test ran.
	Devices int64
}

// Memory is seed 000's "Calculations" block.
type Memory struct {
	IncreaseMiB        float64
	IncreasePercent    float64
	PerDeviceMiB       float64
	UtilizationPercent float64
	// MaxSafeDevices is devices / RAM utilization: how many devices would fill all the RAM
	// if all the memory this test used (what was there before the load too) grew with the
	// devices. Seed 000's figure, kept as it is; it is not the memory bound a CapacityPlan's
	// answer uses (pkg/plan: safePercent of the RAM, less the memory before the load, over
	// the memory per device), and the two differ most for a run of few devices.
	MaxSafeDevices int64
}

// MemoryFrom computes RSS increase, MiB per device, RAM utilization and max safe devices.
func MemoryFrom(in MemoryInputs) Memory {
	m := Memory{IncreaseMiB: in.AfterRSSMiB - in.BeforeRSSMiB}
	if in.BeforeRSSMiB > 0 {
		m.IncreasePercent = 100 * m.IncreaseMiB / in.BeforeRSSMiB
	}
	if in.Devices > 0 {
		m.PerDeviceMiB = m.IncreaseMiB / float64(in.Devices)
	}
	if in.TotalMiB > 0 && in.UsedMiB > 0 {
		utilization := in.UsedMiB / in.TotalMiB
		m.UtilizationPercent = 100 * utilization
		m.MaxSafeDevices = int64(math.Round(float64(in.Devices) / utilization))
	}
	return m
}

// Throughput is seed 000's benchmark sizing: ideal, safe and typical maximum devices.
type Throughput struct {
	IdealMaxDevices   int64
	SafeMaxDevices    int64
	TypicalMaxDevices int64
}

// ThroughputFrom: ideal = pushes per second × push period; safe and typical are percentages
// of ideal (seed 000: 80 % and 20 %).
func ThroughputFrom(pushesPerSecond float64, period time.Duration, safePercent, typicalPercent int32) Throughput {
	ideal := pushesPerSecond * period.Seconds()
	return Throughput{
		IdealMaxDevices:   int64(math.Round(ideal)),
		SafeMaxDevices:    int64(math.Round(ideal * float64(safePercent) / 100)),
		TypicalMaxDevices: int64(math.Round(ideal * float64(typicalPercent) / 100)),
	}
}

// LoadPerCore is CPU use as seed 000 reports it: average cores busy divided by cores available.
func LoadPerCore(averageCores, cores float64) float64 {
	if cores <= 0 {
		return 0
	}
	return averageCores / cores
}

// Format renders a number with fixed decimals, as status fields carry them.
func Format(v float64, decimals int) string {
	return fmt.Sprintf("%.*f", decimals, v)
}
