package judge

import (
	"fmt"
	"math"
)

// PlannedCPUUtilization is the share of a runner's CPU a fleet is sized to use: below
// GeneratorCPUBound with room for the bursts a mean hides (parallelism auto, and the advice
// to a generator-bound run).
const PlannedCPUUtilization = 0.7

// SuggestedParallelism is about how many runners a run that ended generator-bound on CPU needs
// for the same load: the n it had, scaled by the load it wanted over the load it carried
// (iterations done and dropped over done) and by its busiest runner's CPU use over
// PlannedCPUUtilization, at least n+1 and at most maxN. 0 when CPU was not the limit (no
// runner above GeneratorCPUBound): more runners would not help then, more VUs would.
func SuggestedParallelism(n int, maxUtilization float64, done, dropped uint64, maxN int) int {
	if n < 1 || !(maxUtilization > GeneratorCPUBound) || math.IsInf(maxUtilization, 0) {
		return 0
	}
	demand := 1.0
	if done > 0 {
		demand = float64(done+dropped) / float64(done)
	}
	want := math.Ceil(float64(n) * demand * maxUtilization / PlannedCPUUtilization)
	if !(want < float64(maxN)) {
		return maxN
	}
	return min(max(int(want), n+1), maxN)
}

// GrowAdvice is the sentence a generator-bound run's reason ends with; "" without a suggestion.
func GrowAdvice(n, suggested, maxN int) string {
	switch {
	case suggested <= 0:
		return ""
	case n >= maxN:
		return fmt.Sprintf("generator-bound at the most runners a run has (%d): give each runner more CPU (spec.runner.resources) or lower the load", maxN)
	}
	return fmt.Sprintf("generator-bound: raise parallelism to about %d (from %d)", suggested, n)
}
