package copy

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func stage(run *v1alpha1.TestRun, conds []metav1.Condition) {
	copy(run.Status.Conditions, conds)
}
