package setcondition

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
)

var set = meta.SetStatusCondition

func stage(run *v1alpha1.TestRun, c metav1.Condition) {
	meta.SetStatusCondition(&run.Status.Conditions, c)
}

func renamed(run *v1alpha1.TestRun, c metav1.Condition) {
	conds := &run.Status.Conditions
	set(conds, c)
}
