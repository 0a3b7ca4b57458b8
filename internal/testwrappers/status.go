package testwrappers

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Results sets status.results.
func (w *TestRunWrapper) Results(r *v1alpha1.Results) *TestRunWrapper { w.Status.Results = r; return w }

// TargetUsage sets status.target.
func (w *TestRunWrapper) TargetUsage(t *v1alpha1.TargetUsage) *TestRunWrapper {
	w.Status.Target = t
	return w
}

// CapacityResult sets status.capacity.
func (w *TestRunWrapper) CapacityResult(c *v1alpha1.CapacityResult) *TestRunWrapper {
	w.Status.Capacity = c
	return w
}

// Measured fills the status of a run that Succeeded with verdict v, every figure a report
// shows set and each distinct (seed 000's Stab-2-2 on C1 where it has one), so a renderer that
// shows one figure under another's name is caught.
func (w *TestRunWrapper) Measured(v v1alpha1.Verdict) *TestRunWrapper {
	return w.Phase(v1alpha1.PhaseSucceeded, "", "").Verdict(v).
		Results(&v1alpha1.Results{
			Protocol:   "http",
			Requests:   &v1alpha1.RequestCounts{Total: 34031, Accepted: 34000, Dropped: 31, DroppedPercent: "0.09"},
			Iterations: &v1alpha1.IterationCounts{Total: 34031, Dropped: 2},
			Throughput: &v1alpha1.Throughput{RequestsPerSecond: "4.66", ReceivedMbps: "0.12", SentMbps: "0.03"},
			Latency:    &v1alpha1.Latency{Min: "2.00ms", Avg: "11.0ms", P50: "9.00ms", P90: "20.0ms", P95: "24.0ms", P99: "41.7ms", Max: "80.0ms"},
			Checks:     &v1alpha1.CheckCounts{Passed: 2990, Failed: 10},
		}).
		TargetUsage(&v1alpha1.TargetUsage{
			Memory:   &v1alpha1.MemoryUsage{BeforeMiB: 44, AfterMiB: 57, PeakMiB: 61, IncreaseMiB: 13, IncreasePercent: "29.55", PerDeviceMiB: "0.013"},
			CPU:      &v1alpha1.CPUUsage{AverageCoresPerCore: "0.07", PeakCoresPerCore: "0.31"},
			Restarts: 1,
		}).
		CapacityResult(&v1alpha1.CapacityResult{PushesPerSecond: "125.53", IdealMaxDevices: 25106, TypicalMaxDevices: 5021, SafeMaxDevices: 20085,
			MaxSafeDevicesByMemory: 2081, BreakingPointDevices: 30000})
}
