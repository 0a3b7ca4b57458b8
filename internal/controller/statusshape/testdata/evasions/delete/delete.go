package delete

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

func stage(run *v1alpha1.TestRun) {
	if p := run.Status.Profile; p != nil {
		delete(p.Spec.NodeSelector, "zone")
	}
}
