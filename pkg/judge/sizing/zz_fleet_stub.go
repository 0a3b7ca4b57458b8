package sizing

import "time"

// TEMPORARY stub of wip/math's fleet.go (deleted before that branch is merged).

func RateFor(devices int64, period time.Duration) float64 {
	return float64(devices) / period.Seconds()
}

func Rescale(devices int64, from, to time.Duration) int64 {
	return int64(float64(devices) * to.Seconds() / from.Seconds())
}

type Price struct{ PerHour, PerVCPUHour, PerGiBHour float64 }

const HoursPerMonth = 730

func (p Price) Monthly(cores, memoryGiB float64) float64 {
	if p.PerHour > 0 {
		return p.PerHour * HoursPerMonth
	}
	return (p.PerVCPUHour*cores + p.PerGiBHour*memoryGiB) * HoursPerMonth
}

func PerThousandDevices(monthly float64, devices int64) float64 {
	return monthly * 1000 / float64(devices)
}
