package provision

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/target"
)

// pollTargetSlot is how often a run waiting for a target slot looks again: a run ending frees
// one, and no watch of TestRun status reports that.
const pollTargetSlot = 3 * time.Second

// ReconcileTargetLimit holds a run Pending TargetLimitReached while its namespace already has
// MaxTargetsPerNamespace provisioned targets, until one goes or the provisioning deadline
// passes. It comes just before reconcileTarget, which marks the run as holding one (its
// status.targetNamespace) in the same reconcile: who holds a target is read from the runs
// themselves, and survives a restart.
func (r *Stage) ReconcileTargetLimit(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run := s.Run
	if r.MaxTargetsPerNamespace <= 0 || run.Spec.Target.External != nil || holdsTarget(run) || s.Started() {
		return ctrl.Result{}, nil
	}
	var list v1alpha1.TestRunList
	if err := r.List(ctx, &list, client.InNamespace(run.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	ahead, granted := r.slots.Take(run, list.Items, r.MaxTargetsPerNamespace)
	if granted {
		return ctrl.Result{}, nil
	}
	msg := fmt.Sprintf("namespace %s already has %d provisioned targets (or runs queued before this one), the most this operator allows "+
		"(its --max-targets-per-namespace); this run starts when one of them ends", run.Namespace, len(ahead))
	return s.WaitOrFail(s.ProvisioningDeadline(), pollTargetSlot, v1alpha1.PhasePending, v1alpha1.ReasonTargetLimitReached,
		v1alpha1.ReasonTargetLimitReached, msg, "; wait for or delete a running TestRun of the namespace, raise spec.timeouts.provisioning, "+
			"or ask the admin to raise the limit"), nil
}

// holdsTarget: run has, or is making, a target that still runs: it went past the limit
// (status.targetNamespace is written then) and has not ended, or ended keeping its target.
func holdsTarget(run *v1alpha1.TestRun) bool {
	if run.Spec.Target.External != nil || run.Status.TargetNamespace == "" || !run.DeletionTimestamp.IsZero() {
		return false
	}
	return !decide.IsFinished(run) || decide.TargetPolicy(run) == v1alpha1.TargetKeepUntilDeleted
}

// queuedBefore: other waits for a slot and came first, so it gets the next one.
func queuedBefore(other, run *v1alpha1.TestRun) bool {
	if other.Status.Reason != v1alpha1.ReasonTargetLimitReached || decide.IsFinished(other) || !other.DeletionTimestamp.IsZero() {
		return false
	}
	if !other.CreationTimestamp.Equal(&run.CreationTimestamp) {
		return other.CreationTimestamp.Before(&run.CreationTimestamp)
	}
	return other.Name < run.Name
}

// TargetSlots remembers the runs let through that the cache does not show holding a target yet:
// its copy of a TestRun lags the status the last reconcile wrote, and a second run must not
// take the same slot meanwhile.
type TargetSlots struct {
	mu      sync.Mutex
	granted map[types.NamespacedName]bool
}

// Take grants run a slot when fewer than limit runs are ahead of it, and returns those. Counting
// and granting hold one lock: with several workers, two runs of a namespace reconciled at once
// must not both take the last slot.
func (t *TargetSlots) Take(run *v1alpha1.TestRun, cached []v1alpha1.TestRun, limit int) (map[string]bool, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ahead := t.ahead(run, cached)
	if len(ahead) >= limit {
		return ahead, false
	}
	t.grant(run)
	return ahead, true
}

func (t *TargetSlots) grant(run *v1alpha1.TestRun) {
	if t.granted == nil {
		t.granted = map[types.NamespacedName]bool{}
	}
	t.granted[types.NamespacedName{Namespace: run.Namespace, Name: run.Name}] = true
}

// ahead are the runs of run's namespace that hold a target or wait for one before it; t.mu held.
func (t *TargetSlots) ahead(run *v1alpha1.TestRun, cached []v1alpha1.TestRun) map[string]bool {
	out := map[string]bool{}
	listed := map[string]bool{}
	for i := range cached {
		other := &cached[i]
		if other.Name == run.Name {
			continue
		}
		listed[other.Name] = true
		key := types.NamespacedName{Namespace: other.Namespace, Name: other.Name}
		switch {
		case holdsTarget(other):
			out[other.Name] = true
			delete(t.granted, key) // the cache caught up
		case decide.IsFinished(other) || !other.DeletionTimestamp.IsZero():
			delete(t.granted, key)
		case t.granted[key] || queuedBefore(other, run):
			out[other.Name] = true
		}
	}
	for key := range t.granted {
		if key.Namespace == run.Namespace && key.Name != run.Name && !listed[key.Name] {
			delete(t.granted, key) // deleted
		}
	}
	return out
}

// buildFailureReason is the reason a target that cannot be built ends with: NotPermitted when
// it asks for more than the TestRun may have (target.NotPermittedError), else InvalidTarget.
func buildFailureReason(err error) string {
	if target.IsNotPermitted(err) {
		return v1alpha1.ReasonNotPermitted
	}
	return v1alpha1.ReasonInvalidTarget
}
