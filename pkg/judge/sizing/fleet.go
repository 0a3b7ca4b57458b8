package sizing

import (
	"math"
	"math/big"
	"time"
)

// Little's law and cost: "which machine for N devices every period, at what cost".

// RateFor is Little's law for a fleet: λ = devices / period, in actions per second. 0 for a period
// that is not positive.
func RateFor(devices int64, period time.Duration) float64 {
	if period <= 0 {
		return 0
	}
	return float64(devices) / period.Seconds()
}

// Rescale is the device count that gives the same rate at another period: devices · to / from,
// rounded down (a fleet that fits must not be rounded up). Seed 000: "for a period of 100 s you
// need to divide the number by 2" from 200 s. Exact integer arithmetic, so that large fleets and
// nanosecond periods cannot overflow; 0 for a period or count that is not positive.
func Rescale(devices int64, from, to time.Duration) int64 {
	if devices <= 0 || from <= 0 || to <= 0 {
		return 0
	}
	v := new(big.Int).Mul(big.NewInt(devices), big.NewInt(int64(to)))
	v.Quo(v, big.NewInt(int64(from)))
	if !v.IsInt64() {
		return math.MaxInt64
	}
	return v.Int64()
}

// Price is what a machine costs: either PerHour for the whole machine, or PerVCPUHour and
// PerGiBHour for its resources (cloud on-demand prices are quoted either way).
type Price struct{ PerHour, PerVCPUHour, PerGiBHour float64 }

// HoursPerMonth is 8760/12, the month cloud providers bill by.
const HoursPerMonth = 730

// Monthly is the cost of a month of one machine of the given size. A PerHour price is the whole
// machine's and wins over the per-resource pair when both are set.
func (p Price) Monthly(cores, memoryGiB float64) float64 {
	if p.PerHour > 0 {
		return p.PerHour * HoursPerMonth
	}
	return (p.PerVCPUHour*cores + p.PerGiBHour*memoryGiB) * HoursPerMonth
}

// PerThousandDevices is the monthly cost per 1,000 devices served; 0 for no devices.
func PerThousandDevices(monthly float64, devices int64) float64 {
	if devices <= 0 {
		return 0
	}
	return monthly * 1000 / float64(devices)
}

// Safe applies the headroom rule: the low end of the ideal range times the utilisation cap,
// rounded down. The low end is Spread.Low: up to 8 runs the unluckiest run, so every measured
// run holds; from 9 the lower bound of the median's 95 % confidence interval, which LowRank−1
// runs measured less than (see Spread.LowRank). The cap (e.g. 0.7) keeps queueing delay
// bounded (see MM1Stretch). 0 for a utilisation outside (0, 1] or a low that is not positive.
func Safe(low float64, utilisation float64) int64 {
	if !(utilisation > 0 && utilisation <= 1) || !(low > 0) || math.IsInf(low, 0) {
		return 0
	}
	// 100 × 0.29 is 28.999999999999996 in float64: nudge by a relative 1e-12 so that a product
	// that is whole on paper is not floored one below it.
	return int64(math.Floor(low * utilisation * (1 + 1e-12)))
}

// MM1Stretch is response time over service time at utilisation u for an M/M/1 queue, 1/(1−u):
// 3.33 at 0.7, 10 at 0.9. +Inf at u >= 1 (the queue grows without bound); 1 for u <= 0.
func MM1Stretch(u float64) float64 {
	switch {
	case u >= 1:
		return math.Inf(1)
	case !(u > 0):
		return 1
	}
	return 1 / (1 - u)
}
