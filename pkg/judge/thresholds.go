package judge

import (
	"fmt"
	"sort"
	"strings"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/pkg/measure"
)

// judgedThresholds are the thresholds judged on the merged data: every one, the ones that did
// not hold (for the verdict and the condition) and the warnings of those judged on no data.
type judgedThresholds struct {
	evaluated      []measure.ThresholdResult
	failed, noData []string
}

// judgeThresholds is the second step of BuildWith: spec.thresholds and the script's own, judged
// on the merged data as k6 would, written into r.Thresholds (and r.Warnings for no data).
func judgeThresholds(s *measure.Summary, thresholds map[string]v1alpha1.ThresholdList, noData v1alpha1.ThresholdsOnNoData, r *v1alpha1.Results) judgedThresholds {
	spec := map[string][]string{}
	for metric, exprs := range thresholds {
		for _, e := range exprs {
			spec[metric] = append(spec[metric], string(e))
		}
	}
	// The script's own thresholds, which k6 judged per runner, count too, judged on merged data.
	evaluated := append(s.EvaluateThresholds(spec), scriptOnly(s.Thresholds, spec)...)
	sort.SliceStable(evaluated, func(i, j int) bool { return evaluated[i].Metric < evaluated[j].Metric })
	j := judgedThresholds{evaluated: evaluated, noData: judgeNoData(evaluated, noData)}
	for _, w := range j.noData {
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
			j.failed = append(j.failed, fmt.Sprintf("%s %s (no data, spec.thresholdsOnNoData: Fail)", t.Metric, t.Expression))
		default:
			j.failed = append(j.failed, fmt.Sprintf("%s %s (was %g)", t.Metric, t.Expression, round(t.Value)))
		}
	}
	return j
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
