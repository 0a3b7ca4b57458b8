package provision

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/target"
)

// pollTargetSlot is how often a run waiting for a target slot, or for room for its runners,
// looks again: a run ending frees one, and no watch of TestRun status reports that.
const pollTargetSlot = 3 * time.Second

// targetRule counts the runs holding a target, one each.
var targetRule = slotRule{holds: holdsTarget, weight: func(*v1alpha1.TestRun) int { return 1 }, reason: v1alpha1.ReasonTargetLimitReached}

// runnerRule counts the runners of the runs holding them.
var runnerRule = slotRule{holds: holdsRunners, weight: (*v1alpha1.TestRun).RunnerCount, reason: v1alpha1.ReasonRunnerLimitReached}

// ReconcileRunnerLimit holds a run Pending RunnerLimitReached while its runners and those of
// the namespace's runs in flight would pass MaxRunnersPerNamespace, until enough of them end
// or the provisioning deadline passes; a run asking more than the cap alone ends NotPermitted.
// It comes before the pre-flight, so a waiting run holds no pod; a run holds its runners from
// the reconcile that lets it through (its phase is Provisioning or Starting at its end) until it
// ends. A TestRun asking 5,000 runners thus never has the manager write 5,000 Jobs unchecked.
func (r *Stage) ReconcileRunnerLimit(ctx context.Context, s *decide.Scope) (ctrl.Result, error) {
	run, limit, n := s.Run, r.MaxRunnersPerNamespace, len(s.Runners)
	if limit <= 0 || n == 0 || holdsRunners(run) || s.Started() {
		return ctrl.Result{}, nil
	}
	if n > limit {
		s.Fail(v1alpha1.ReasonNotPermitted, fmt.Sprintf("the run asks for %d runners, more than the %d this operator lets the TestRuns of one namespace "+
			"have in flight (its --max-runners-per-namespace); lower spec.parallelism, or ask the admin to raise the limit", n, limit))
		return ctrl.Result{}, nil
	}
	var list v1alpha1.TestRunList
	if err := r.List(ctx, &list, client.InNamespace(run.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	ahead, granted := r.runnerSlots.Take(run, n, list.Items, limit)
	if granted {
		return ctrl.Result{}, nil
	}
	msg := fmt.Sprintf("namespace %s already has %d runners in flight (or asked by runs queued before this one), and this run's %d would pass the %d "+
		"this operator allows (its --max-runners-per-namespace); this run starts when enough of them end", run.Namespace, ahead, n, limit)
	return s.WaitOrFail(s.ProvisioningDeadline(), pollTargetSlot, v1alpha1.PhasePending, v1alpha1.ReasonRunnerLimitReached,
		v1alpha1.ReasonRunnerLimitReached, msg, "; wait for or delete a running TestRun of the namespace, lower spec.parallelism, "+
			"raise spec.timeouts.provisioning, or ask the admin to raise the limit"), nil
}

// holdsRunners: run went past the runner limit (into Provisioning or Starting, where its Jobs
// are made) and has not ended.
func holdsRunners(run *v1alpha1.TestRun) bool {
	if decide.IsFinished(run) || !run.DeletionTimestamp.IsZero() {
		return false
	}
	switch run.Status.Phase {
	case v1alpha1.PhaseProvisioning, v1alpha1.PhaseStarting, v1alpha1.PhaseRunning, v1alpha1.PhaseCollecting:
		return true
	}
	return false
}

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
	ahead, granted := r.slots.Take(run, 1, list.Items, r.MaxTargetsPerNamespace)
	if granted {
		return ctrl.Result{}, nil
	}
	msg := fmt.Sprintf("namespace %s already has %d provisioned targets (or runs queued before this one), the most this operator allows "+
		"(its --max-targets-per-namespace); this run starts when one of them ends", run.Namespace, ahead)
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

// buildFailureReason is the reason a target that cannot be built ends with: NotPermitted when
// it asks for more than the TestRun may have (target.NotPermittedError), else InvalidTarget.
func buildFailureReason(err error) string {
	if target.IsNotPermitted(err) {
		return v1alpha1.ReasonNotPermitted
	}
	return v1alpha1.ReasonInvalidTarget
}
