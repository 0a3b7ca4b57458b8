package alias

import v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"

func stage(run *v1alpha1.TestRun) {
	st := &run.Status
	st.Phase = v1alpha1.PhaseFailed
}
