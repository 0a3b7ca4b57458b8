package naming

// Workload names the Kueue Workload that admits a TestRun (spec.queue). Kept within a label
// value: Kueue and its tools put a workload's name in labels.
func Workload(testRun string) string {
	return withSuffix(testRun, "-testrun", maxDNSLabelLength)
}
