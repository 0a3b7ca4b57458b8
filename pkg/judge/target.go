package judge

import (
	"fmt"
	"strconv"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/capacity"
)

// TargetProblems lists what the target did that fails the test on its own, whatever the
// thresholds said: a crash or restart (seed 000 counts "Crashes" and "Reboots"), memory growing
// beyond the stability limit, or more matching log lines than a pattern allows.
func TargetProblems(t *v1alpha1.TargetUsage, spec *v1alpha1.TestRunSpec) []string {
	if t == nil {
		return nil
	}
	var out []string
	if t.Restarts > 0 {
		out = append(out, fmt.Sprintf("target containers restarted %d times (%d OOM kills)", t.Restarts, t.OOMKills))
	}
	st := spec.Stability
	if st == nil {
		return out
	}
	if st.MaxMemoryGrowthPercent != nil && t.Memory != nil {
		if growth, err := strconv.ParseFloat(t.Memory.IncreasePercent, 64); err == nil && growth > float64(*st.MaxMemoryGrowthPercent) {
			out = append(out, fmt.Sprintf("target memory grew %s%%, more than maxMemoryGrowthPercent %d", t.Memory.IncreasePercent, *st.MaxMemoryGrowthPercent))
		}
	}
	for _, p := range st.LogPatterns {
		if p.FailAbove == nil {
			continue
		}
		for _, f := range t.LogFindings {
			if f.Pattern == p.Name && f.Count > *p.FailAbove {
				out = append(out, fmt.Sprintf("%d target log lines match %s, more than failAbove %d (first: %s)", f.Count, p.Name, *p.FailAbove, f.Sample))
			}
		}
	}
	return out
}

// CapacityAssumptions are the assumptions a run's device counts are computed with: its
// spec.capacity over the defaults (push period spec.load.period, safe 80 %, typical 20 %).
// A CapacityPlan's answer rescales from the same push period (pkg/plan.PlanPeriod).
func CapacityAssumptions(spec *v1alpha1.TestRunSpec) v1alpha1.CapacitySpec {
	c := v1alpha1.CapacitySpec{SafePercent: 80, TypicalPercent: 20}
	if spec.Load != nil {
		c.PushPeriod = spec.Load.Period
	}
	if spec.Capacity != nil {
		if spec.Capacity.PushPeriod != "" {
			c.PushPeriod = spec.Capacity.PushPeriod
		}
		if spec.Capacity.SafePercent != 0 {
			c.SafePercent = spec.Capacity.SafePercent
		}
		if spec.Capacity.TypicalPercent != 0 {
			c.TypicalPercent = spec.Capacity.TypicalPercent
		}
	}
	return c
}

// Capacity turns the accepted push rate into device counts with seed 000's formulas, for the
// tests that measure a rate the target can sustain (benchmark, peak) with a device model.
func Capacity(r *v1alpha1.Results, spec *v1alpha1.TestRunSpec, into *v1alpha1.CapacityResult) *v1alpha1.CapacityResult {
	if r == nil || r.Requests == nil || r.Throughput == nil || spec.Load == nil || spec.Load.Devices == nil {
		return into
	}
	if spec.Type != v1alpha1.TestTypeBenchmark && spec.Type != v1alpha1.TestTypePeak {
		return into
	}
	c := CapacityAssumptions(spec)
	period, err := time.ParseDuration(string(c.PushPeriod))
	rate, err2 := strconv.ParseFloat(r.Throughput.RequestsPerSecond, 64)
	if err != nil || err2 != nil || r.Requests.Total == 0 {
		return into
	}
	// Only accepted pushes count: a dropped one is load the target did not handle.
	pushes := rate * float64(r.Requests.Accepted) / float64(r.Requests.Total)
	t := capacity.ThroughputFrom(pushes, period, int32(c.SafePercent), int32(c.TypicalPercent))
	if into == nil {
		into = &v1alpha1.CapacityResult{}
	}
	into.PushesPerSecond = capacity.Format(pushes, 2)
	into.IdealMaxDevices, into.SafeMaxDevices, into.TypicalMaxDevices = t.IdealMaxDevices, t.SafeMaxDevices, t.TypicalMaxDevices
	return into
}
