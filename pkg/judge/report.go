// Package report turns the merged results of all runners into a TestRun's status: counts,
// throughput, latency, thresholds, the verdict and whether the load generator was the limit.
package judge

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// GeneratorCPUBound is the runner CPU utilization above which the generator, not the
// target, is taken to be the limit.
const GeneratorCPUBound = 0.9

// maxWarnings bounds results.warnings, as the API does.
const maxWarnings = 16

// Outcome is what a finished run writes into status.
type Outcome struct {
	Results              *v1alpha1.Results
	Verdict              v1alpha1.Verdict
	GeneratorBound       bool
	GeneratorBoundReason string
	// FailedThresholds lists the thresholds that did not hold, for the condition message.
	FailedThresholds []string
	// K6Summary is the full merged result in k6's summary shape.
	K6Summary K6Summary
	// NoData warns of the thresholds judged on no data (also in Results.Warnings).
	NoData []string
	// RunnerMemory is status.runners.memory (RunnersMemory), set by the caller, which has the spec.
	RunnerMemory *v1alpha1.RunnerMemory
}

// Options are the TestRun's choices in how the merged results are judged.
type Options struct {
	// NoData is spec.thresholdsOnNoData: Fail fails a threshold that matched no sample.
	NoData v1alpha1.ThresholdsOnNoData
}

// Build maps a merged summary onto status. expectedRunners is the TestRun's parallelism: fewer
// final envelopes than that marks the results partial.
func Build(s *measure.Summary, thresholds map[string]v1alpha1.ThresholdList, expectedRunners int) Outcome {
	return BuildWith(s, thresholds, expectedRunners, Options{})
}

// BuildWith is Build judged with opts.
func BuildWith(s *measure.Summary, thresholds map[string]v1alpha1.ThresholdList, expectedRunners int, opts Options) Outcome {
	out := Outcome{Results: &v1alpha1.Results{}}
	r := out.Results
	final := 0
	for _, runner := range s.Runners {
		if runner.Final {
			final++
		}
	}
	r.Partial = !s.Complete || final < expectedRunners

	req := requestsOf(s)
	r.Protocol = req.protocol
	r.Requests = &v1alpha1.RequestCounts{
		Total:          int64(req.total),
		Accepted:       int64(req.total) - int64(req.failed),
		Dropped:        int64(req.failed),
		DroppedPercent: percent(float64(req.failed), req.total),
	}
	droppedIterations := counter(s, "dropped_iterations")
	r.Iterations = &v1alpha1.IterationCounts{Total: int64(counter(s, "iterations")), Dropped: int64(droppedIterations)}
	r.Throughput = &v1alpha1.Throughput{
		RequestsPerSecond: fmt.Sprintf("%.2f", req.rate),
		DataSentBytes:     int64(counter(s, "data_sent")),
		DataReceivedBytes: int64(counter(s, "data_received")),
	}
	if sec := s.Duration.Seconds(); sec > 0 {
		r.Throughput.ReceivedMbps = fmt.Sprintf("%.2f", float64(counter(s, "data_received"))*8/1e6/sec)
		r.Throughput.SentMbps = fmt.Sprintf("%.2f", float64(counter(s, "data_sent"))*8/1e6/sec)
	}
	if m := req.duration; m != nil && m.Stats.Count > 0 {
		st := m.Stats
		r.Latency = &v1alpha1.Latency{
			Min: Millis(st.Min), Avg: Millis(st.Avg), P50: Millis(st.Med), P90: Millis(st.P90),
			P95: Millis(st.P95), P99: Millis(st.P99), Max: Millis(st.Max),
			AboveAveragePercent: fmt.Sprintf("%.1f", st.AboveAvgPercent),
			BelowAveragePercent: fmt.Sprintf("%.1f", st.BelowAvgPercent),
		}
	}
	r.Checks = checkCounts(s)
	var omitted int
	r.Metrics, omitted = metricRows(s)
	if omitted > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d more metrics are not listed in status (at most %d are)", omitted, maxMetrics))
	}
	r.Scenarios = scenarioRows(s, req)
	for _, o := range s.Overflows {
		if len(r.Warnings) < maxWarnings {
			r.Warnings = append(r.Warnings, o.Message())
		}
	}

	spec := map[string][]string{}
	for metric, exprs := range thresholds {
		for _, e := range exprs {
			spec[metric] = append(spec[metric], string(e))
		}
	}
	// The script's own thresholds, which k6 judged per runner, count too, judged on merged data.
	evaluated := append(s.EvaluateThresholds(spec), scriptOnly(s.Thresholds, spec)...)
	sort.SliceStable(evaluated, func(i, j int) bool { return evaluated[i].Metric < evaluated[j].Metric })
	out.NoData = judgeNoData(evaluated, opts.NoData)
	for _, w := range out.NoData {
		if len(r.Warnings) < maxWarnings {
			r.Warnings = append(r.Warnings, w)
		}
	}
	for _, t := range evaluated {
		r.Thresholds = append(r.Thresholds, v1alpha1.ThresholdResult{
			Metric: t.Metric, Expression: t.Expression, Passed: t.Passed, Value: fmt.Sprintf("%g", round(t.Value)),
		})
		switch {
		case t.Passed:
		case t.NoData:
			out.FailedThresholds = append(out.FailedThresholds, fmt.Sprintf("%s %s (no data, spec.thresholdsOnNoData: Fail)", t.Metric, t.Expression))
		default:
			out.FailedThresholds = append(out.FailedThresholds, fmt.Sprintf("%s %s (was %g)", t.Metric, t.Expression, round(t.Value)))
		}
	}

	out.K6Summary = BuildK6Summary(s, evaluated)

	var reasons []string
	if droppedIterations > 0 {
		reasons = append(reasons, fmt.Sprintf("%d iterations dropped: the runners had too few VUs or too little CPU to keep the arrival rate", droppedIterations))
	}
	for _, runner := range s.Runners {
		if runner.CPUUtilization > GeneratorCPUBound {
			reasons = append(reasons, fmt.Sprintf("runner %s used %.0f%% of its CPU", runner.Name, 100*runner.CPUUtilization))
		}
	}
	out.GeneratorBound = len(reasons) > 0
	out.GeneratorBoundReason = strings.Join(reasons, "; ")

	switch {
	case len(out.FailedThresholds) > 0:
		out.Verdict = v1alpha1.VerdictFailed
	case r.Partial || out.GeneratorBound:
		out.Verdict = v1alpha1.VerdictInconclusive
	default:
		out.Verdict = v1alpha1.VerdictPassed
	}
	return out
}

// scriptOnly drops script thresholds that spec.thresholds repeats.
func scriptOnly(script []measure.ThresholdResult, spec map[string][]string) []measure.ThresholdResult {
	var out []measure.ThresholdResult
	for _, t := range script {
		repeated := false
		for _, e := range spec[t.Metric] {
			repeated = repeated || strings.TrimSpace(e) == strings.TrimSpace(t.Expression)
		}
		if !repeated {
			out = append(out, t)
		}
	}
	return out
}

func counter(s *measure.Summary, name string) uint64 {
	if m := s.Metrics[name]; m != nil {
		return uint64(m.Stats.Sum)
	}
	return 0
}

func percent(part float64, whole uint64) string {
	if whole == 0 {
		return "0.00"
	}
	return fmt.Sprintf("%.2f", 100*part/float64(whole))
}

func round(v float64) float64 {
	return float64(int64(v*1000+0.5)) / 1000
}

// Millis renders a duration in milliseconds the way the seed reports write them: 11ms,
// 4.52ms, 1.25s.
func Millis(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fms", ms)
	}
}
