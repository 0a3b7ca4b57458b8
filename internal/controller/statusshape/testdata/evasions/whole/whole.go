package whole

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

func stage(run *v1alpha1.TestRun) {
	run.Status = v1alpha1.TestRunStatus{Phase: v1alpha1.PhaseFailed}
}
