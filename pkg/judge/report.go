// Package judge turns the merged results of all runners into a TestRun's status: counts,
// throughput, latency, thresholds, whether the load generator was the limit, and the facts the
// verdict (pkg/judge/verdict) is decided from.
package judge

import (
	"fmt"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/judge/verdict"
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

// BuildWith is Build judged with opts, one straight pipeline: tabulate the merged summary, judge
// the thresholds on it, build k6's summary of both, and say whether the generator was the limit.
// The verdict is pkg/judge/verdict's, from the Outcome's Facts.
func BuildWith(s *measure.Summary, thresholds map[string]v1alpha1.ThresholdList, expectedRunners int, opts Options) Outcome {
	results := tabulate(s, expectedRunners)
	judged := judgeThresholds(s, thresholds, opts.NoData, results)
	out := Outcome{Results: results, FailedThresholds: judged.failed, NoData: judged.noData}
	out.K6Summary = BuildK6Summary(s, judged.evaluated)
	out.GeneratorBound, out.GeneratorBoundReason = generatorBound(s)
	return out
}

// generatorBound says whether the runners, not the target, limited the load, and why: iterations
// dropped for want of VUs or CPU, or a runner above GeneratorCPUBound.
func generatorBound(s *measure.Summary) (bool, string) {
	var reasons []string
	if dropped := counter(s, "dropped_iterations"); dropped > 0 {
		reasons = append(reasons, fmt.Sprintf("%d iterations dropped: the runners had too few VUs or too little CPU to keep the arrival rate", dropped))
	}
	for _, runner := range s.Runners {
		if runner.CPUUtilization > GeneratorCPUBound {
			reasons = append(reasons, fmt.Sprintf("runner %s used %.0f%% of its CPU", runner.Name, 100*runner.CPUUtilization))
		}
	}
	return len(reasons) > 0, strings.Join(reasons, "; ")
}

// Facts are what the verdict reads of the merged results (verdict.Decide).
func (o *Outcome) Facts() verdict.Results {
	r := o.Results
	f := verdict.Results{FailedThresholds: o.FailedThresholds, Judged: len(r.Thresholds), Partial: r.Partial}
	if o.GeneratorBound {
		f.GeneratorBound = o.GeneratorBoundReason
	}
	if r.Requests != nil {
		f.Requests = r.Requests.Total
	}
	if r.Throughput != nil {
		f.RequestsPerSecond = r.Throughput.RequestsPerSecond
	}
	if r.Iterations != nil {
		f.Iterations = r.Iterations.Total
	}
	if r.Checks != nil {
		f.Checks, f.ChecksPassed, f.ChecksFailed = true, r.Checks.Passed, r.Checks.Failed
	}
	return f
}
