package plan

import (
	"strconv"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// CPU load per core from which the target's cores count as saturated: over the whole run on
// average, or at its busiest sample.
const (
	cpuSaturatedAverage = 0.8
	cpuSaturatedPeak    = 0.95
)

// RowLimit names what bound a child's run, strongest evidence first: generators that could
// not keep up make every other figure a lower bound; an OOM-killed target ran out of memory;
// saturated cores are the cause a stop rule only shows as a symptom; then the peak test's stop
// rule; a benchmark (closed loop, it always saturates something) that saturated none of these
// was held by the target itself (a worker pool, a lock, I/O). A run whose load simply held
// (a stability run, a climb that reached maxDevices) names none.
func RowLimit(run *v1alpha1.TestRun) string {
	st := &run.Status
	if st.Phase != v1alpha1.PhaseSucceeded {
		return "" // not measured to the end: nothing to name
	}
	t := st.Target
	switch {
	case st.GeneratorBound:
		return v1alpha1.LimitGenerator
	case t != nil && t.OOMKills > 0:
		return v1alpha1.LimitMemory
	case t != nil && cpuSaturated(t.CPU):
		return v1alpha1.LimitCPU
	case st.Peak != nil && st.Peak.BreakingPoint == v1alpha1.PeakReached:
		return stopRuleLimit(st.Peak.StopRule)
	case run.Spec.Type == v1alpha1.TestTypeBenchmark:
		return v1alpha1.LimitTarget
	}
	return ""
}

func cpuSaturated(c *v1alpha1.CPUUsage) bool {
	if c == nil {
		return false
	}
	avg, err1 := strconv.ParseFloat(c.AverageCoresPerCore, 64)
	peak, err2 := strconv.ParseFloat(c.PeakCoresPerCore, 64)
	return (err1 == nil && avg >= cpuSaturatedAverage) || (err2 == nil && peak >= cpuSaturatedPeak)
}

// stopRuleLimit classifies judge.StopRule's words: a p95 rule is latency; errors, dropped
// actions and a step where nothing completed are errors.
func stopRuleLimit(rule string) string {
	if strings.HasPrefix(rule, "p95 ") {
		return v1alpha1.LimitLatency
	}
	return v1alpha1.LimitErrors
}
