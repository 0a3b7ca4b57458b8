package decide

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
)

// KeptTarget is how long an ended run keeps its target (spec.cleanup.target KeepUntilDeleted):
// spec.cleanup.keepFor after its end, cut to the most the operator keeps one, so that no target
// outlives its inspection by more than an admin allows.
type KeptTarget struct {
	// Until is when the target is released.
	Until time.Time
	// For is how long after the end it is kept; Asked is spec.cleanup.keepFor (0: unset), Max
	// the operator's --max-kept-target.
	For, Asked, Max time.Duration
	// Expired: Until has passed, and the target is released now.
	Expired bool
}

// KeepOf says how long run, ended, keeps its target at now; false when it keeps none: its
// policy releases it, it never had one provisioned (external, or ended before one was made), or
// its kept time ran out before and was recorded (TargetKept False, so TargetPolicy releases it).
func KeepOf(run *v1alpha1.TestRun, maxKept time.Duration, now time.Time) (KeptTarget, bool) {
	if !IsFinished(run) || run.Spec.Target.External != nil || run.Status.TargetNamespace == "" || run.Status.CompletionTime == nil ||
		TargetPolicy(run) != v1alpha1.TargetKeepUntilDeleted {
		return KeptTarget{}, false
	}
	k := KeptTarget{Max: maxKept, For: maxKept}
	if run.Spec.Cleanup.KeepFor != "" {
		k.Asked = rc.Timeout(run.Spec.Cleanup.KeepFor, maxKept)
		k.For = min(k.Asked, maxKept)
	}
	k.Until = run.Status.CompletionTime.Add(k.For)
	k.Expired = !now.Before(k.Until)
	return k, true
}

// Condition is TargetKept as k stands: True until the release, saying when and why then, and
// whether keepFor was cut; False KeepExpired once released.
func (k KeptTarget) Condition(generation int64) metav1.Condition {
	until := k.Until.UTC().Format(time.RFC3339)
	why := fmt.Sprintf("%s after the run ended: spec.cleanup.keepFor", k.For)
	switch {
	case k.Asked == 0:
		why = fmt.Sprintf("%s after the run ended: the most this operator keeps a target (its --max-kept-target), as spec.cleanup.keepFor is unset", k.For)
	case k.Asked > k.Max:
		why = fmt.Sprintf("%s after the run ended: spec.cleanup.keepFor asked %s, cut to the most this operator keeps a target (its --max-kept-target)", k.For, k.Asked)
	}
	status, reason := metav1.ConditionTrue, v1alpha1.ReasonKept
	msg := fmt.Sprintf("the target is kept until %s, %s; delete the TestRun to release it sooner", until, why)
	if k.Expired {
		status, reason = metav1.ConditionFalse, v1alpha1.ReasonKeepExpired
		msg = fmt.Sprintf("the target was kept until %s, %s; it was released then (its namespace, or its objects in a shared one, deleted)", until, why)
	}
	return metav1.Condition{Type: v1alpha1.ConditionTargetKept, Status: status, Reason: reason, ObservedGeneration: generation,
		Message: rc.Truncate(msg, rc.MaxConditionMessage)}
}

// keepExpired: TargetKept records that the kept target's time ran out.
func keepExpired(run *v1alpha1.TestRun) bool {
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionTargetKept)
	return c != nil && c.Status == metav1.ConditionFalse
}
