package judge

import (
	"fmt"
	"time"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// StepMeasure is what the runners measured during one peak step's hold.
type StepMeasure struct {
	Requests uint64
	// Iterations k6 completed: the unit of work of a script that speaks no HTTP.
	Iterations        uint64
	RequestsPerSecond float64
	// ErrorPercent of requests failed (http_req_failed).
	ErrorPercent float64
	// DroppedPercent of the devices' actions k6 could not start on time (dropped_iterations
	// over iterations started plus dropped): the fleet pushes more than the target takes in.
	DroppedPercent float64
	// P95Millis of http_req_duration.
	P95Millis float64
}

// MeasureStep merges the runners' windows within [from, to).
func MeasureStep(envs []measure.Envelope, from, to time.Time) StepMeasure {
	var m StepMeasure
	reqs, _ := measure.WindowedAgg(envs, "http_reqs", from, to)
	m.Requests = uint64(reqs.Sum)
	if secs := to.Sub(from).Seconds(); secs > 0 {
		m.RequestsPerSecond = reqs.Sum / secs
	}
	if failed, ok := measure.WindowedAgg(envs, "http_req_failed", from, to); ok && failed.Count > 0 {
		m.ErrorPercent = 100 * float64(failed.NonZero) / float64(failed.Count)
	}
	iters, _ := measure.WindowedAgg(envs, "iterations", from, to)
	dropped, _ := measure.WindowedAgg(envs, "dropped_iterations", from, to)
	m.Iterations = uint64(iters.Sum)
	if all := iters.Sum + dropped.Sum; all > 0 {
		m.DroppedPercent = 100 * dropped.Sum / all
	}
	if d, ok := measure.WindowedAgg(envs, "http_req_duration", from, to); ok {
		m.P95Millis = d.Quantile(0.95)
	}
	return m
}

// StopRule says which of the rules the step broke, or "" when it held. A step in which no
// iteration completed did not hold either: nothing got through.
func StopRule(rules v1alpha1.PeakStopRules, m StepMeasure) string {
	pct := func(p *v1alpha1.Percent) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return float64(*p), true
	}
	if limit, ok := pct(rules.DroppedPercentAbove); ok && m.DroppedPercent > limit {
		return fmt.Sprintf("dropped %.2f%% > %g%%", m.DroppedPercent, limit)
	}
	if limit, ok := pct(rules.ErrorPercentAbove); ok && m.ErrorPercent > limit {
		return fmt.Sprintf("errors %.2f%% > %g%%", m.ErrorPercent, limit)
	}
	if rules.P95Above != "" {
		if limit, err := time.ParseDuration(string(rules.P95Above)); err == nil && m.P95Millis > float64(limit)/float64(time.Millisecond) {
			return fmt.Sprintf("p95 %s > %s", Millis(m.P95Millis), rules.P95Above)
		}
	}
	if m.Requests == 0 && m.Iterations == 0 {
		return "nothing completed during the step"
	}
	return ""
}
