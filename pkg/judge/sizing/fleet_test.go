package sizing

import (
	"math"
	"testing"
	"time"
)

func TestRateForAndRescale(t *testing.T) {
	// The planner's question: 40,000 devices every 260 s is 153.85 actions per second.
	if got := RateFor(40000, 260*time.Second); !near(got, 40000.0/260, 1e-15) {
		t.Errorf("RateFor = %v", got)
	}
	if RateFor(100, 0) != 0 {
		t.Error("no rate without a period")
	}
	for _, c := range []struct {
		name     string
		devices  int64
		from, to time.Duration
		want     int64
	}{
		// Seed 000: "for a period of 100 s you need to divide the number by 2" (from 200 s).
		{"seed 000: 200 s to 100 s halves", 37992, 200 * time.Second, 100 * time.Second, 18996},
		{"same rate, longer period doubles", 37992, 200 * time.Second, 400 * time.Second, 75984},
		// 40000 · 200/260 = 30769.23: rounded down, a fleet that fits must not be rounded up.
		{"260 s measured, 200 s asked", 40000, 260 * time.Second, 200 * time.Second, 30769},
		{"rounds down", 3, 200 * time.Second, 100 * time.Second, 1},
		{"sub-second periods", 1000, 1500 * time.Millisecond, 500 * time.Millisecond, 333},
		{"no period", 1000, 0, time.Second, 0},
		{"no devices", 0, time.Second, time.Second, 0},
		{"saturates instead of overflowing", math.MaxInt64 / 2, time.Second, time.Hour, math.MaxInt64},
		// 9e18 ns · 9e9 devices overflows int64 in a naive product; the result itself fits.
		{"no intermediate overflow", 9_000_000_000, 2_000_000_000 * time.Second, 1_000_000_000 * time.Second, 4_500_000_000},
	} {
		if got := Rescale(c.devices, c.from, c.to); got != c.want {
			t.Errorf("%s: Rescale(%d, %v, %v) = %d, want %d", c.name, c.devices, c.from, c.to, got, c.want)
		}
	}
}

func TestCost(t *testing.T) {
	// By hand: 4 vCPU and 16 GiB at 0.04 per vCPU-hour and 0.005 per GiB-hour is 0.16 + 0.08 =
	// 0.24 an hour, × 730 hours = 175.20 a month; for 40,000 devices that is 175.20/40 = 4.38 per
	// 1,000 devices a month.
	p := Price{PerVCPUHour: 0.04, PerGiBHour: 0.005}
	if got := p.Monthly(4, 16); !near(got, 175.2, 1e-12) {
		t.Errorf("Monthly = %v, want 175.20", got)
	}
	if got := PerThousandDevices(175.2, 40000); !near(got, 4.38, 1e-12) {
		t.Errorf("PerThousandDevices = %v, want 4.38", got)
	}
	// A whole-machine price: 0.192 an hour × 730 = 140.16, whatever the size, and it wins over the pair.
	if got := (Price{PerHour: 0.192, PerVCPUHour: 1}).Monthly(4, 16); !near(got, 140.16, 1e-12) {
		t.Errorf("PerHour Monthly = %v, want 140.16", got)
	}
	if HoursPerMonth*12 != 8760 {
		t.Error("a month is 8760/12 hours")
	}
	if PerThousandDevices(100, 0) != 0 || (Price{}).Monthly(4, 16) != 0 {
		t.Error("no devices or no price costs nothing")
	}
}

func TestSafeAndMM1Stretch(t *testing.T) {
	for _, c := range []struct {
		low, u float64
		want   int64
	}{
		{37992, 0.7, 26594}, // 26594.4 rounded down
		{1000, 0.7, 700},
		{100, 0.29, 29}, // 100 × 0.29 = 28.999999999999996 in float64: still 29
		{10, 1, 10},
		{1000, 0, 0},
		{1000, 1.5, 0}, // a cap above 100 % is not a cap
		{1000, math.NaN(), 0},
		{-5, 0.7, 0},
	} {
		if got := Safe(c.low, c.u); got != c.want {
			t.Errorf("Safe(%v, %v) = %d, want %d", c.low, c.u, got, c.want)
		}
	}
	for _, c := range []struct{ u, want float64 }{
		{0.7, 1 / 0.3}, // 3.33: the headroom rule
		{0.5, 2},
		{0.9, 10},
		{0, 1},
		{-1, 1},
		{1, math.Inf(1)},
	} {
		if got := MM1Stretch(c.u); !(got == c.want || near(got, c.want, 1e-12)) {
			t.Errorf("MM1Stretch(%v) = %v, want %v", c.u, got, c.want)
		}
	}
	if s := MM1Stretch(0.7); math.Round(s*100)/100 != 3.33 {
		t.Errorf("MM1Stretch(0.7) = %v, the issue says 3.3×", s)
	}
}
