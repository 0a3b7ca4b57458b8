package provision

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "fleetbench.dev/fleetbench/api/v1alpha1"
	rc "fleetbench.dev/fleetbench/internal/controller/ctrlkit"
	"fleetbench.dev/fleetbench/internal/controller/testrun/decide"
	"fleetbench.dev/fleetbench/pkg/naming"
	"fleetbench.dev/fleetbench/pkg/runners"
)

// The pre-flight runs alongside provisioning, not before it: reconcilePreflight creates its Job
// and the same reconcile goes on to the target (after the target limit, which still comes
// before anything in the target namespace) and the runner Jobs. A test that passes does not
// wait for it: k6 loads the script in the pre-flight pod while the target's and the runners'
// pods start. Nothing starts before its verdict: the runners start k6 --paused and send nothing
// until the operator's start signal, and setup() runs only through the operator (reconcileStart,
// which awaitPreflight precedes).
//
// A refused test costs seconds of target time and no load: finish deletes the runner Jobs (none
// started) and the next reconcile deletes the target (reconcileFinished, whatever
// spec.cleanup.target says, see refusedByPreflight). The target lived only while k6 loaded the
// script in the pre-flight pod, usually less than the target itself takes to become Ready.

// AwaitPreflight holds the start until k6 run accepted the test in the pre-flight. A refusal
// ends the run in reconcilePreflight, on the reconcile the pre-flight pod's end wakes.
func (r *Stage) AwaitPreflight(_ context.Context, s *decide.Scope) (ctrl.Result, error) {
	if s.Started() || s.ConditionTrue(v1alpha1.ConditionScriptChecked) {
		return ctrl.Result{}, nil
	}
	msg := "waiting for the script pre-flight (k6 run's checks)"
	if c := s.Condition(v1alpha1.ConditionScriptChecked); c != nil && c.Message != "" {
		msg = c.Message
	}
	msg += "; the target and runners are ready, and the load starts once k6 run accepted the test"
	return s.WaitOrFail(s.ProvisioningDeadline(), 0, s.Phase(), v1alpha1.ReasonCheckingScript,
		v1alpha1.ReasonRunnerFailedBeforeStart, msg, preflightTooLong(s)), nil
}

// preflightTooLong is the fix for a pre-flight that had no verdict by the provisioning deadline.
func preflightTooLong(s *decide.Scope) string {
	return fmt.Sprintf("; the pre-flight did not finish within spec.timeouts.provisioning (%s): see its pod's events "+
		"(kubectl describe pod -l fleetbench.dev/role=preflight), or raise the timeout", s.Timeouts.Provisioning)
}

// DeletePreflightUnlessRefused deletes the pre-flight Job of a run that ended before its start
// for another reason than the pre-flight's own refusal: one still checking (the run failed on
// its target or a runner meanwhile) has no verdict that matters any more, and one that passed
// in the very reconcile the run failed was never deleted by deletePassedPreflight. A refused
// pre-flight keeps its Job for kubectl logs. Only the Job this run controls is deleted.
func (r *Stage) DeletePreflightUnlessRefused(ctx context.Context, run *v1alpha1.TestRun, conditions []metav1.Condition) error {
	if decide.RefusedBy(conditions) {
		return nil
	}
	return r.deletePreflightJob(ctx, run)
}

// deletePreflightJob deletes the run's pre-flight Job if this run controls it, with a UID
// precondition; a Job of that name someone else made is left alone.
func (r *Stage) deletePreflightJob(ctx context.Context, run *v1alpha1.TestRun) error {
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: naming.PreflightJob(run.Name)}, job)
	if err != nil || !decide.ControlledBy(job, run.UID) || !job.DeletionTimestamp.IsZero() {
		return client.IgnoreNotFound(err)
	}
	return rc.DeleteExact(ctx, r.Client, job)
}

// deletePassedPreflight deletes the pre-flight Job of a run whose status already holds the
// passed verdict, if this run controls it.
func (r *Stage) deletePassedPreflight(ctx context.Context, s *decide.Scope) error {
	if !meta.IsStatusConditionTrue(s.Run.Status.Conditions, v1alpha1.ConditionScriptChecked) {
		return nil // decided in this reconcile, not yet written; or no pre-flight (started earlier)
	}
	return r.deletePreflightJob(ctx, s.Run)
}

// PreflightEnded: the pre-flight pod's k6 container has ended, with its exit code and
// termination message final. The kubelet reports that about a second before the pod's phase
// turns Succeeded or Failed (it first stops the pod's sandbox), a second the verdict, and so
// the start, need not wait. The container never runs again: callers pass only the pod of the
// pre-flight Job this run controls, whose template (immutable in a Job) says restartPolicy
// Never (runners.Job); the cache keeps no pod spec to check it on.
func PreflightEnded(pod *corev1.Pod) bool {
	if decide.Terminated(pod) {
		return true
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == runners.ContainerName && cs.State.Terminated != nil {
			return true
		}
	}
	return false
}
