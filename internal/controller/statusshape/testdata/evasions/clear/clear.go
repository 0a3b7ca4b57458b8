package clear

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

func stage(run *v1alpha1.TestRun) {
	clear(run.Status.Conditions)
}
