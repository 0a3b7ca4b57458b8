package v1alpha1

// RunnerMemory is the runners' own resident memory: the highest any reached, and the trend of
// each runner's memory over the load fitted as the target's is (status.target.memory.trend),
// reported for the worst runner. A leaking runner is the generator's fault (the script, k6 or
// an extension), not the target's: it never fails the run as a target leak does. It adds a
// warning to results.warnings and a RunnerMemoryLeak event, and the run's verdict is left as
// the target and thresholds make it.
type RunnerMemory struct {
	// peakMiB is the highest resident memory any runner reached (its max RSS).
	// +optional
	PeakMiB int64 `json:"peakMiB,omitempty"`
	// runner is the runner the trend is of: the leaking one with the steepest slope; when none
	// leaks, the one with the steepest slope fitted; when none could be fitted, the one with
	// the most samples.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Runner string `json:"runner,omitempty"`
	// fitted counts the runners whose memory could be fitted (enough samples after the
	// warm-up); leaking those whose verdict is leak.
	// +optional
	Fitted int32 `json:"fitted,omitempty"`
	// +optional
	Leaking int32 `json:"leaking,omitempty"`
	// trend is that runner's memory trend, judged with spec.stability.leak's warm-up and
	// horizon and projected to the runners' memory limit (spec.runner.resources.limits.memory).
	// +optional
	Trend *MemoryTrend `json:"trend,omitempty"`
}
