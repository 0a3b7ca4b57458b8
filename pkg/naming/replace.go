package naming

import "fmt"

// LabelReplacement marks a replacement runner's Job and pod with its number (1 for the first
// replacement of a runner); an original runner has none.
const LabelReplacement = "fleetbench.dev/replacement"

// ReplacementJob names the k-th replacement of runner i (k ≥ 1), and its ConfigMap (the k6
// config for the remaining time): <run>-runner-<i>-r<k>, within a label value.
func ReplacementJob(testRun string, i, k int) string {
	return withSuffix(testRun, fmt.Sprintf("-runner-%d-r%d", i, k), maxDNSLabelLength)
}

// RunnerBudget names the PodDisruptionBudget covering a TestRun's runners.
func RunnerBudget(testRun string) string {
	return withSuffix(testRun, "-runners", 253)
}

// TargetBudget names the PodDisruptionBudget covering a TestRun's target pods in the target
// namespace: in a namespace of its own one name does; a shared one takes SharedTargetObject.
const TargetBudget = "fleetbench-target"
