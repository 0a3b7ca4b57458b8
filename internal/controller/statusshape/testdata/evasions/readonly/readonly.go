// Package readonly reads statuses, copies them and records decisions: none of it is a write.
package readonly

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/statusshape/testdata/evasions/decide"
	"fleetbench.dev/fleetbench/internal/controller/statusshape/testdata/evasions/helper"
)

type decision struct{ comparison *v1alpha1.Comparison }

func stage(run *v1alpha1.TestRun, d *decision, c metav1.Condition) string {
	st := &run.Status
	msg := fmt.Sprintf("%s %v", st.Phase, &run.Status)
	if meta.IsStatusConditionTrue(run.Status.Conditions, v1alpha1.ConditionStarted) {
		msg += meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionStarted).Message
	}
	conds := slices.Clone(run.Status.Conditions)
	meta.SetStatusCondition(&conds, c)
	if pinned := run.Status.Comparison; pinned != nil {
		cmp := pinned.DeepCopy()
		cmp.Decision = v1alpha1.ComparisonNoData
		helper.Decide(cmp)
		msg += helper.Reads(pinned)
		d.comparison = cmp
	}
	fresh := v1alpha1.Comparison{Message: msg}
	fresh.Decision = v1alpha1.ComparisonNoData
	helper.Decide(&fresh)
	for _, g := range run.Status.Conditions {
		g.Message = "a copy"
	}
	run.Status = decide.Compose(run, c)
	run.Status = decide.Bounded(run.Status)
	return msg
}
