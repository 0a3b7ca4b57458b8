// Package decide stands for the composer: its compose.go alone may write a status.
package decide

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

// Compose builds the status from a copy, as the real composer does.
func Compose(run *v1alpha1.TestRun, c metav1.Condition) v1alpha1.TestRunStatus {
	st := *run.Status.DeepCopy()
	st.Phase = v1alpha1.PhaseRunning
	meta.SetStatusCondition(&st.Conditions, c)
	return st
}

// Bounded writes its argument's lists in place: only its result may be stored back.
func Bounded(st v1alpha1.TestRunStatus) v1alpha1.TestRunStatus {
	for i := range st.Conditions {
		st.Conditions[i].Message = ""
	}
	return st
}
