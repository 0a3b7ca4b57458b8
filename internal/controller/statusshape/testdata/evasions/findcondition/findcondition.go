package findcondition

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

func stage(run *v1alpha1.TestRun) {
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionStarted); c != nil {
		c.Status = metav1.ConditionFalse
	}
}
