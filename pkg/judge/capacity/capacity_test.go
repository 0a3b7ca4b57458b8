package capacity

import (
	"testing"
	"time"
)

// Seed 000's stability table, inputs and the outputs it reports. The seed's spreadsheet takes
// "used" from the post-test OS figure for C1 and C2 but from the pre-test figure for C3, C4
// and H1; the rows below feed each column the figure its own outputs were computed from.
func TestMemoryReproducesSeed000(t *testing.T) {
	cases := []struct {
		name              string
		in                MemoryInputs
		increase, percent string
		perDevice, util   string
		maxSafe           int64
	}{
		{"Stab-2-2 / C1", MemoryInputs{BeforeRSSMiB: 44, AfterRSSMiB: 57, UsedMiB: 246, TotalMiB: 512, Devices: 1000}, "13", "29.55", "0.013", "48.05", 2081},
		{"Stab-4-2 / C2", MemoryInputs{BeforeRSSMiB: 44, AfterRSSMiB: 75, UsedMiB: 336, TotalMiB: 1024, Devices: 3000}, "31", "70.45", "0.010", "32.81", 9143},
		{"Stab-8-2 / C3", MemoryInputs{BeforeRSSMiB: 44, AfterRSSMiB: 186, UsedMiB: 226, TotalMiB: 2048, Devices: 10000}, "142", "322.73", "0.014", "11.04", 90619},
		{"Stab-16-2 / C4", MemoryInputs{BeforeRSSMiB: 44, AfterRSSMiB: 415, UsedMiB: 217, TotalMiB: 4096, Devices: 30000}, "371", "843.18", "0.012", "5.30", 566267},
	}
	for _, tc := range cases {
		m := MemoryFrom(tc.in)
		got := []string{Format(m.IncreaseMiB, 0), Format(m.IncreasePercent, 2), Format(m.PerDeviceMiB, 3), Format(m.UtilizationPercent, 2)}
		want := []string{tc.increase, tc.percent, tc.perDevice, tc.util}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: column %d = %s, seed says %s", tc.name, i, got[i], want[i])
			}
		}
		if m.MaxSafeDevices != tc.maxSafe {
			t.Errorf("%s: max safe devices = %d, seed says %d", tc.name, m.MaxSafeDevices, tc.maxSafe)
		}
	}
}

// Seed 000's sizing line: Bench-6-SSL with one handler, push period 200 s.
func TestThroughputReproducesSeed000(t *testing.T) {
	cases := []struct {
		profile     string
		pushes      float64
		ideal, safe int64
	}{
		{"C1", 125.53, 25106, 20085},
		{"C2", 237.45, 47490, 37992},
		{"C3", 284.02, 56804, 45443},
		{"C4", 323.93, 64786, 51829},
		{"H0", 96.64, 19328, 15462},
	}
	for _, tc := range cases {
		got := ThroughputFrom(tc.pushes, 200*time.Second, 80, 20)
		if got.IdealMaxDevices != tc.ideal || got.SafeMaxDevices != tc.safe {
			t.Errorf("%s: ideal %d safe %d, seed says %d and %d", tc.profile, got.IdealMaxDevices, got.SafeMaxDevices, tc.ideal, tc.safe)
		}
		if want := int64(float64(tc.ideal)*0.2 + 0.5); got.TypicalMaxDevices != want {
			t.Errorf("%s: typical %d, want 20%% of ideal = %d", tc.profile, got.TypicalMaxDevices, want)
		}
	}
}

func TestLoadPerCore(t *testing.T) {
	// Seed 000: "avg load 15 / cpu core" 0.16 on C2 (2 cores) is 0.08.
	if got := Format(LoadPerCore(0.16, 2), 2); got != "0.08" {
		t.Errorf("load per core = %s", got)
	}
	if LoadPerCore(1, 0) != 0 {
		t.Error("no cores must not divide by zero")
	}
}
