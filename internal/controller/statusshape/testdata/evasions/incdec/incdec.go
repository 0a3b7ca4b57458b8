package incdec

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

func stage(run *v1alpha1.TestRun) {
	if r := run.Status.Runners; r != nil {
		r.Ready++
	}
}
