package plan

import (
	"testing"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	tw "fleetbench.dev/fleetbench/internal/testwrappers"
)

// stabilityRun is a stability run named name on profile that held devices and grew perDevice MiB
// per device from 100 MiB.
func stabilityRun(name, profile string, devices int32, perDevice string) *tw.TestRunWrapper {
	w := tw.MakeTestRun(name, "ns").Type(v1alpha1.TestTypeStability).Devices(devices, "6s").Profile(profile).
		Phase(v1alpha1.PhaseSucceeded, v1alpha1.ReasonCompleted, "").Verdict(v1alpha1.VerdictPassed)
	snapshot(w, profile)
	return withMemory(w, 100, perDevice)
}

// TestSummarizeMemoryBound: the safe fleet is the smaller of the throughput bound and the memory
// bound, from spec.memoryFrom's stability runs when there are any, else from the plan's own rows
// (and then said to be extrapolated). The throughput bound is 760 throughout: 3 repetitions of
// 950, 1000, 1050 ideal devices on C1 (512 MiB), floor(950 × 80 %).
func TestSummarizeMemoryBound(t *testing.T) {
	const ownRows = "median of this plan's 3 rows"
	for _, tc := range []struct {
		name      string
		stability []*tw.TestRunWrapper
		own       string // the children's own memory per device; "" for none
		fleet     int64
		limit     string
		message   string
	}{{
		// (512 MiB × 80 % − 100 MiB) / 0.5 MiB = (409.6 − 100) / 0.5 = 619.2 → 619 < 760. The
		// largest per device of C1's runs counts (0.5 over 0.25); C2's and a failed run do not;
		// the profile is matched without case.
		name: "a stability run bounds it by memory",
		stability: []*tw.TestRunWrapper{
			stabilityRun("stab-light", "C1", 1000, "0.25"),
			stabilityRun("stab-c1", "c1", 300, "0.5"),
			stabilityRun("stab-c2", "C2", 300, "5.0"),
			stabilityRun("stab-broken", "C1", 300, "2.0").Phase(v1alpha1.PhaseFailed, v1alpha1.ReasonRunnerOOMKilled, ""),
		},
		own:     "0.001", // ignored: the stability runs say it better
		fleet:   619,
		limit:   v1alpha1.LimitMemory,
		message: "memory: 0.5000 MiB per device (stability run stab-c1, 300 devices) fills 80 % of 512 MiB, from 100 MiB before the load, at 619 devices",
	}, {
		// (409.6 − 100) / 0.0625 = 4953.6 → 4953 > 760: throughput holds.
		name:      "a stability run that allows more",
		stability: []*tw.TestRunWrapper{stabilityRun("stab-c1", "C1", 300, "0.0625")},
		fleet:     760,
		limit:     v1alpha1.LimitTarget,
		message: "target: saturated below its CPU and memory (a worker pool, a lock or I/O inside it); memory would allow more: " +
			"0.0625 MiB per device (stability run stab-c1, 300 devices) fills 80 % of 512 MiB, from 100 MiB before the load, at 4953 devices",
	}, {
		// (409.6 − 44) / 0.5 = 731.2 → 731 < 760, measured at 100 devices: 7× beyond them.
		name:  "the plan's own rows bound it, extrapolated",
		own:   "0.5",
		fleet: 731,
		limit: v1alpha1.LimitMemory,
		message: "memory: 0.5000 MiB per device (" + ownRows + ") fills 80 % of 512 MiB, from 44 MiB before the load, at 731 devices: " +
			"extrapolated 7× from 100 devices; name a stability run in spec.memoryFrom to measure it",
	}, {
		// (409.6 − 44) / 0.013 = 28123.08 → 28123, 281× the 100 devices measured.
		name:  "the plan's own rows allow more",
		own:   "0.013",
		fleet: 760,
		limit: v1alpha1.LimitTarget,
		message: "target: saturated below its CPU and memory (a worker pool, a lock or I/O inside it); memory would allow more: " +
			"0.0130 MiB per device (" + ownRows + ") fills 80 % of 512 MiB, from 44 MiB before the load, at 28123 devices: " +
			"extrapolated 281× from 100 devices; name a stability run in spec.memoryFrom to measure it",
	}, {
		// a footprint that did not grow bounds nothing, and must not claim that memory allows more
		name:    "memory that did not grow",
		own:     "0",
		fleet:   760,
		limit:   v1alpha1.LimitTarget,
		message: "target: saturated below its CPU and memory (a worker pool, a lock or I/O inside it); memory per device did not grow (" + ownRows + ")",
	}, {
		// a status decimal that parses but is no number ("NaN", "Inf") is not a footprint: it
		// would floor to a nonsense count
		name:      "a stability run whose memory per device is not a number",
		stability: []*tw.TestRunWrapper{stabilityRun("stab-nan", "C1", 300, "NaN"), stabilityRun("stab-inf", "C1", 300, "+Inf")},
		fleet:     760,
		limit:     v1alpha1.LimitTarget,
		message:   "target: saturated below its CPU and memory (a worker pool, a lock or I/O inside it)",
	}, {
		name:    "no memory figures at all",
		fleet:   760,
		limit:   v1alpha1.LimitTarget,
		message: "target: saturated below its CPU and memory (a worker pool, a lock or I/O inside it)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := sizingSpec(3, []string{"4"}, "C1", "C2")
			in := inputOf(spec, ideals(map[string][]int64{"C1/4": {1000, 950, 1050}}, func(_ Cell, w *tw.TestRunWrapper) {
				if tc.own != "" {
					withMemory(w, 44, tc.own)
				}
			}))
			for _, s := range tc.stability {
				in.Stability = append(in.Stability, *s.Obj())
			}
			s := summaryOf(t, Summarize(in), "C1")
			if s.SafeFleet != tc.fleet || s.Limit != tc.limit || s.LimitMessage != tc.message {
				t.Errorf("safe fleet %d limit %q\n message %q\nwant %d %q\n message %q", s.SafeFleet, s.Limit, s.LimitMessage, tc.fleet, tc.limit, tc.message)
			}
			if s.Floor.SafeMaxDevices != 760 {
				t.Errorf("the floor's own safe count %d changed: memory bounds the fleet, not the cell", s.Floor.SafeMaxDevices)
			}
		})
	}
}

// TestLimitMessageWithoutLimit: peak climbs that held up to maxDevices name no limit; memory that
// allows more is then the whole message, not "; memory would allow more".
func TestLimitMessageWithoutLimit(t *testing.T) {
	spec := sizingSpec(1, []string{"4"}, "C1")
	in := inputOf(spec, ideals(map[string][]int64{"C1/4": {1000}}, func(_ Cell, w *tw.TestRunWrapper) {
		w.Type(v1alpha1.TestTypePeak).Status.Peak = &v1alpha1.PeakResult{BreakingPoint: v1alpha1.PeakNotReached, LastHeldDevices: 100}
		withMemory(w, 44, "0.013")
	}))
	s := summaryOf(t, Summarize(in), "C1")
	// (409.6 − 44) / 0.013 = 28123; safe floor(1000 × 0.8) = 800
	want := "memory would allow more: 0.0130 MiB per device (this plan's one row) fills 80 % of 512 MiB, from 44 MiB before the load, at 28123 devices: " +
		"extrapolated 281× from 100 devices; name a stability run in spec.memoryFrom to measure it"
	if s.Limit != "" || s.SafeFleet != 800 || s.LimitMessage != want {
		t.Errorf("limit %q fleet %d message %q; want none, 800, %q", s.Limit, s.SafeFleet, s.LimitMessage, want)
	}
}
