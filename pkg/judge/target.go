package judge

import (
	"fmt"
	"strconv"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/capacity"
	"fleetbench.dev/fleetbench/pkg/textsafe"
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
	if p, ok := leakProblem(t, st); ok {
		out = append(out, p)
	}
	for _, p := range st.LogPatterns {
		if p.FailAbove == nil {
			continue
		}
		// A count of part of the logs above the limit fails all the same: those lines matched.
		if f := finding(t, p.Name); f != nil && f.Count > *p.FailAbove {
			out = append(out, fmt.Sprintf("%d target log lines match %s, more than failAbove %d (first: %s)", f.Count, p.Name, *p.FailAbove, f.Sample))
		}
	}
	return out
}

// UncountedPatterns names the log patterns with failAbove whose count covers only part of the
// target's logs (status.target.logFindings[].incomplete) and is within the limit: what was not
// counted could hold the lines that fail it, so they are not judged passed.
func UncountedPatterns(t *v1alpha1.TargetUsage, spec *v1alpha1.TestRunSpec) []string {
	if t == nil || spec.Stability == nil {
		return nil
	}
	var out []string
	for _, p := range spec.Stability.LogPatterns {
		if f := finding(t, p.Name); p.FailAbove != nil && f != nil && f.Incomplete != "" && f.Count <= *p.FailAbove {
			out = append(out, fmt.Sprintf("log pattern %s (failAbove %d): %d lines, %s", p.Name, *p.FailAbove, f.Count, f.Incomplete))
		}
	}
	return out
}

// finding is the pattern's finding; names compare as status shows them (printable).
func finding(t *v1alpha1.TargetUsage, name string) *v1alpha1.LogFinding {
	for i := range t.LogFindings {
		if textsafe.Line(t.LogFindings[i].Pattern) == textsafe.Line(name) {
			return &t.LogFindings[i]
		}
	}
	return nil
}

// Assumptions are what turn a measured rate into device counts: the push period and the
// safe and typical percentages of the ideal maximum.
type Assumptions struct {
	Period                      time.Duration
	SafePercent, TypicalPercent int32
}

// CapacityAssumptions are a run's spec.capacity with its defaults: the push period of
// spec.load.period, safe 80 % and typical 20 % (seed 000). The CapacityPlan's figures and
// answers use the same, so one place says what a device count assumes.
func CapacityAssumptions(spec *v1alpha1.TestRunSpec) (Assumptions, error) {
	c := Assumptions{SafePercent: 80, TypicalPercent: 20}
	period := ""
	if spec.Load != nil {
		period = string(spec.Load.Period)
	}
	if spec.Capacity != nil {
		if spec.Capacity.PushPeriod != "" {
			period = string(spec.Capacity.PushPeriod)
		}
		if spec.Capacity.SafePercent != 0 {
			c.SafePercent = int32(spec.Capacity.SafePercent)
		}
		if spec.Capacity.TypicalPercent != 0 {
			c.TypicalPercent = int32(spec.Capacity.TypicalPercent)
		}
	}
	var err error
	c.Period, err = time.ParseDuration(period)
	return c, err
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
	c, err := CapacityAssumptions(spec)
	rate, err2 := strconv.ParseFloat(r.Throughput.RequestsPerSecond, 64)
	if err != nil || err2 != nil || r.Requests.Total == 0 {
		return into
	}
	// Only accepted pushes count: a dropped one is load the target did not handle.
	pushes := rate * float64(r.Requests.Accepted) / float64(r.Requests.Total)
	t := capacity.ThroughputFrom(pushes, c.Period, c.SafePercent, c.TypicalPercent)
	if into == nil {
		into = &v1alpha1.CapacityResult{}
	}
	into.PushesPerSecond = capacity.Format(pushes, 2)
	into.IdealMaxDevices, into.SafeMaxDevices, into.TypicalMaxDevices = t.IdealMaxDevices, t.SafeMaxDevices, t.TypicalMaxDevices
	return into
}
