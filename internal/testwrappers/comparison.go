package testwrappers

import (
	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Compared sets status.comparison: the run compared with the TestRun baseline (uid and source
// TestRun), decided by its rows as the controller decides (Regressed if any regressed).
func (w *TestRunWrapper) Compared(baseline, uid string, rows ...v1alpha1.MetricComparison) *TestRunWrapper {
	c := &v1alpha1.Comparison{Baseline: &v1alpha1.ComparedRun{Name: baseline, UID: uid, Source: "TestRun"}, Metrics: rows,
		Decision: v1alpha1.ComparisonSuccess,
		Method:   "Mann-Whitney U over 10 s window blocks, one-sided, alpha 0.05; bootstrap 95 % CI of the ratio"}
	for _, r := range rows {
		if r.Decision == v1alpha1.ComparisonRegressed {
			c.Decision, c.Worst = v1alpha1.ComparisonRegressed, r.Name+" "+r.RatioPercent+" % of baseline"
		}
	}
	w.Status.Comparison = c
	return w
}

// ThroughputDrop is a compared row of throughput at 71.20 % of its baseline, regressed.
func ThroughputDrop() v1alpha1.MetricComparison {
	return v1alpha1.MetricComparison{Name: "throughput", Unit: "req/s", Direction: v1alpha1.HigherIsBetter, Baseline: "200.00", Current: "142.40",
		RatioPercent: "71.20", Band: "success ≥ 100 %, ok ≥ 80 %", CILowPercent: "65.10", CIHighPercent: "77.30", PValue: "0.0004",
		BaselineSamples: 30, CurrentSamples: 30, Decision: v1alpha1.ComparisonRegressed}
}

// LatencyWithin is a compared row of latency p95 at 104.00 %: worse, but within the ok band.
func LatencyWithin() v1alpha1.MetricComparison {
	return v1alpha1.MetricComparison{Name: "latencyP95", Unit: "ms", Direction: v1alpha1.LowerIsBetter, Baseline: "25", Current: "26",
		RatioPercent: "104.00", Band: "success ≤ 100 %, ok ≤ 120 %", CILowPercent: "98.50", CIHighPercent: "109.20", PValue: "0.21",
		BaselineSamples: 30, CurrentSamples: 30, Decision: v1alpha1.ComparisonOK}
}

// MemoryTooFew is a compared row of target memory with too few samples for a decision.
func MemoryTooFew() v1alpha1.MetricComparison {
	return v1alpha1.MetricComparison{Name: "targetMemory", Unit: "MiB", Direction: v1alpha1.LowerIsBetter, Baseline: "61", Current: "64",
		RatioPercent: "104.92", Band: "success ≤ 100 %, ok ≤ 120 %", BaselineSamples: 3, CurrentSamples: 3,
		Decision: v1alpha1.ComparisonTooFewSamples, Note: "3 samples a side: a rank test needs 4 to reach p < 0.05"}
}
