package rangeptr

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

func stage(run *v1alpha1.TestRun) {
	for i := range run.Status.Conditions {
		c := &run.Status.Conditions[i]
		c.Message = ""
	}
}
